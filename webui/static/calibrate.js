// meeplecam calibration page: tap the table corners or the followers on the picture. The taps fill
// the form's text fields (picture pixels), which work without this script too.
(function () {
  "use strict";
  var figure = document.getElementById("calib-picture");
  var img = document.getElementById("calib-img");
  var form = document.getElementById("calib-fix");
  if (!figure || !img || !form) return;
  document.body.classList.add("js");
  var W = +figure.dataset.width, H = +figure.dataset.height;
  var marks = document.getElementById("calib-marks");
  var hint = document.getElementById("tap-hint");
  var mode = null;
  var field = function (name) { return form.elements[name]; };

  function parse(text) {
    var n = (text.match(/-?\d+(?:\.\d+)?/g) || []).map(Number), out = [];
    for (var i = 0; i + 1 < n.length; i += 2) out.push([n[i], n[i + 1]]);
    return out;
  }
  function format(points) {
    return points.map(function (p) { return Math.round(p[0]) + "," + Math.round(p[1]); }).join(" ");
  }
  function draw() {
    marks.innerHTML = "";
    ["corners", "taps"].forEach(function (name) {
      parse(field(name).value).forEach(function (p, i) {
        var dot = document.createElement("span");
        dot.className = "mark " + name;
        dot.style.left = (100 * p[0] / W) + "%";
        dot.style.top = (100 * p[1] / H) + "%";
        dot.textContent = name === "corners" ? String(i + 1) : "";
        marks.appendChild(dot);
      });
    });
  }
  function say(text) { hint.textContent = text; }
  function setMode(next) {
    mode = next;
    figure.classList.toggle("tapping", !!mode);
    document.querySelectorAll("[data-tap]").forEach(function (b) {
      b.classList.toggle("active", b.dataset.tap === mode);
    });
  }

  document.querySelectorAll("[data-tap]").forEach(function (button) {
    button.addEventListener("click", function () {
      var what = button.dataset.tap;
      if (what === "clear") {
        field("corners").value = ""; field("taps").value = "";
        setMode(null); draw(); say("Taps cleared: running again detects the table and finds the followers.");
        return;
      }
      if (what === "corners") {
        field("corners").value = "";
        say("Tap the table's four corners on the picture, in any order.");
      } else {
        field("taps").value = "";
        say("Tap each follower once (at most 8), left to right, then press 'Run again'.");
      }
      setMode(what); draw();
      figure.scrollIntoView({ behavior: "smooth", block: "center" });
    });
  });

  img.addEventListener("click", function (e) {
    if (!mode) { say("Choose 'Tap the 4 corners' or 'Tap the followers' first."); return; }
    var box = img.getBoundingClientRect();
    var x = Math.max(0, Math.min(W, (e.clientX - box.left) * W / box.width));
    var y = Math.max(0, Math.min(H, (e.clientY - box.top) * H / box.height));
    var points = parse(field(mode).value);
    points.push([x, y]);
    field(mode).value = format(points);
    draw();
    if (mode === "corners") {
      if (points.length >= 4) {
        setMode(null);
        say("Four corners given: press 'Run again on this picture'.");
        form.querySelector("button:not([type=button])").focus();
      } else {
        say("Corner " + points.length + " of 4.");
      }
    } else {
      say(points.length + " follower" + (points.length > 1 ? "s" : "") + " tapped.");
      if (points.length >= 8) setMode(null);
    }
  });
  ["corners", "taps"].forEach(function (name) { field(name).addEventListener("input", draw); });
  img.addEventListener("load", draw);
  draw();
})();
