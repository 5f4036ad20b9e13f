// meeplecam live page: tabs, Server-Sent Events, forms posted with the CSRF token, board pan/zoom.
(function () {
  "use strict";
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var version = +document.body.dataset.version;
  var boardVersion = -1;
  var hintTile = "";
  var pendingTurns = null;
  var $ = function (id) { return document.getElementById(id); };

  function toast(text, isError) {
    var t = $("toast");
    t.textContent = text;
    t.className = "show" + (isError ? " error" : "");
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { t.className = ""; }, isError ? 6000 : 2500);
  }

  // --- tabs -------------------------------------------------------------------------------
  function currentTab() { return (location.hash || "#scores").slice(1); }
  function showTab() {
    var name = currentTab();
    if (!$("tab-" + name)) name = "scores";
    document.querySelectorAll(".tab").forEach(function (s) { s.hidden = s.id !== "tab-" + name; });
    document.querySelectorAll("nav.tabs a").forEach(function (a) {
      a.classList.toggle("active", a.dataset.tab === name);
    });
    var img = $("camera-img");
    if (name === "camera") startCamera(img); else if (img.getAttribute("src")) img.removeAttribute("src");
    if (name === "board") loadBoard();
  }
  window.addEventListener("hashchange", showTab);
  document.addEventListener("toggle", function (e) {
    if (e.target.open) fillCorrection(e.target);
    // a correction form was closed: catch up
    if (pendingTurns !== null && e.target.closest && e.target.closest("#turns") && !$("turns").querySelector("details[open]")) {
      $("turns").innerHTML = pendingTurns; pendingTurns = null;
    }
  }, true);

  function fillCorrection(details) { // the correction form is cloned on demand, not sent with every event
    var slot = details.querySelector && details.querySelector(".form-slot");
    var template = $("turn-form-template");
    if (!slot || slot.firstElementChild || !template) return;
    var form = template.content.firstElementChild.cloneNode(true);
    var t = JSON.parse(slot.dataset.record), n = slot.dataset.number;
    form.action = "/api/turns/" + n;
    var set = function (name, value) { var f = form.elements[name]; if (f) f.value = value === undefined || value === null ? "" : value; };
    set("tile", t.tile); set("x", t.x); set("y", t.y); set("rotation", t.rotation);
    set("meeple", t.meeple ? t.meeple.at : "");
    if (t.gingerbread) { set("gb_x", t.gingerbread.x); set("gb_y", t.gingerbread.y); set("gb_at", t.gingerbread.at); }
    form.querySelector("button").textContent = "Correct turn " + n;
    slot.appendChild(form);
  }

  function startCamera(img) {
    var snapshot = function () { img.src = img.dataset.snapshot + "?t=" + Date.now(); };
    img.onerror = function () { // no MJPEG (or it broke): poll snapshots instead
      img.onerror = null;
      var timer = setInterval(function () {
        if (currentTab() !== "camera") { clearInterval(timer); return; }
        snapshot();
      }, 1000);
      snapshot();
    };
    img.src = img.dataset.src + "?t=" + Date.now();
  }

  // --- live updates -------------------------------------------------------------------------
  function apply(data) {
    if (data.version < version) return;
    version = data.version;
    document.body.dataset.version = version;
    var html = data.html || {};
    ["scoreboard", "questions", "turns", "notices"].forEach(function (key) {
      var el = $(key);
      if (html[key] === undefined || !el) return;
      if (key === "turns" && el.querySelector("details[open]")) { // keep an open correction form
        pendingTurns = html[key];
        return;
      }
      el.innerHTML = html[key];
    });
    if (currentTab() === "board") loadBoard();
    window.meeplecamLast = data;
  }

  function connect() {
    if (!window.EventSource) { setInterval(poll, 3000); return; }
    var source = new EventSource("/events");
    source.addEventListener("state", function (e) {
      $("live").textContent = "live"; $("live").className = "live on";
      var data = JSON.parse(e.data);
      data.received = Date.now() / 1000;
      apply(data);
    });
    source.onerror = function () { $("live").textContent = "reconnecting…"; $("live").className = "live off"; };
  }
  function poll() { fetch("/api/state").then(function (r) { return r.json(); }).then(function () { location.reload(); }); }

  // --- the board ------------------------------------------------------------------------------
  function loadBoard() {
    if (boardVersion === version && loadBoard.tile === hintTile) return;
    var wanted = version, tile = hintTile;
    fetch("/board" + (tile ? "?tile=" + encodeURIComponent(tile) : "")).then(function (r) { return r.text(); })
      .then(function (html) {
        var keep = boardView();
        $("board").innerHTML = html;
        boardVersion = wanted; loadBoard.tile = tile;
        setupBoard(keep);
      });
  }
  function boardView() { var svg = document.querySelector("#board-view svg"); return svg && svg.dataset.zoomed ? svg.getAttribute("viewBox") : null; }

  function setupBoard(keep) {
    var svg = document.querySelector("#board-view svg");
    var select = $("hint-tile");
    if (select) select.onchange = function () { hintTile = select.value; boardVersion = -1; loadBoard(); };
    if (!svg) return;
    var home = svg.dataset.home.split(/\s+/).map(Number), view = $("board-view");
    view.style.height = Math.max(280, Math.min(window.innerHeight * 0.7, view.clientWidth * home[3] / home[2] + 4)) + "px";
    if (keep) { svg.setAttribute("viewBox", keep); svg.dataset.zoomed = "1"; }
    var vb = function () { return svg.getAttribute("viewBox").split(/\s+/).map(Number); };
    var set = function (v) { svg.setAttribute("viewBox", v.join(" ")); svg.dataset.zoomed = "1"; };
    var zoom = function (f, cx, cy) {
      var v = vb(); if (cx === undefined) { cx = v[0] + v[2] / 2; cy = v[1] + v[3] / 2; }
      var w = Math.max(150, Math.min(8000, v[2] * f)), h = v[3] * w / v[2];
      set([cx - (cx - v[0]) * w / v[2], cy - (cy - v[1]) * h / v[3], w, h]);
    };
    document.querySelectorAll("[data-zoom]").forEach(function (b) {
      b.onclick = function () {
        if (b.dataset.zoom === "home") { svg.setAttribute("viewBox", svg.dataset.home); delete svg.dataset.zoomed; }
        else zoom(b.dataset.zoom === "in" ? 0.7 : 1.4);
      };
    });
    var pointers = {}, last = null;
    var toSvg = function (x, y) { var r = svg.getBoundingClientRect(), v = vb(), s = Math.max(v[2] / r.width, v[3] / r.height); return [v[0] + (x - r.left) * s, v[1] + (y - r.top) * s, s]; };
    svg.addEventListener("pointerdown", function (e) { pointers[e.pointerId] = [e.clientX, e.clientY]; svg.setPointerCapture(e.pointerId); last = null; });
    svg.addEventListener("pointermove", function (e) {
      if (!pointers[e.pointerId]) return;
      var ids = Object.keys(pointers), prev = pointers[e.pointerId];
      pointers[e.pointerId] = [e.clientX, e.clientY];
      if (ids.length === 1) {
        var v = vb(), s = toSvg(0, 0)[2];
        set([v[0] - (e.clientX - prev[0]) * s, v[1] - (e.clientY - prev[1]) * s, v[2], v[3]]);
      } else if (ids.length === 2) {
        var a = pointers[ids[0]], b = pointers[ids[1]];
        var d = Math.hypot(a[0] - b[0], a[1] - b[1]);
        if (last) { var c = toSvg((a[0] + b[0]) / 2, (a[1] + b[1]) / 2); zoom(last / d, c[0], c[1]); }
        last = d;
      }
    });
    var up = function (e) { delete pointers[e.pointerId]; last = null; };
    svg.addEventListener("pointerup", up); svg.addEventListener("pointercancel", up);
    svg.addEventListener("wheel", function (e) { e.preventDefault(); var c = toSvg(e.clientX, e.clientY); zoom(e.deltaY > 0 ? 1.15 : 0.87, c[0], c[1]); }, { passive: false });
    svg.addEventListener("click", function (e) {
      var g = e.target.closest("g.open.fits"); if (!g) return;
      var li = document.querySelector('#placements li[data-cell="' + g.dataset.cell + '"]');
      if (li) { li.scrollIntoView({ behavior: "smooth", block: "center" }); li.classList.add("flash"); }
    });
  }

  // --- forms: POST with the CSRF token, show the answer, never reload -------------------------
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute("data-api")) return;
    e.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    post(form.action, new FormData(form)).then(function (res) {
      buttons.forEach(function (b) { b.disabled = false; });
      if (res.ok) {
        toast(res.body.message || "done");
        var open = form.closest("details"); if (open) open.open = false;
        if (pendingTurns !== null && !$("turns").querySelector("details[open]")) {
          $("turns").innerHTML = pendingTurns; pendingTurns = null;
        }
        if (form.id === "setup-form" || form.id === "resume-form") location.hash = "#scores";
      } else {
        toast(res.body.error || ("error " + res.status), true);
      }
    });
  });

  function post(url, body, retried) {
    return fetch(url, { method: "POST", body: body, credentials: "same-origin",
      headers: { "X-CSRF-Token": csrf, "X-Requested-With": "fetch" } })
      .then(function (r) { return r.json().catch(function () { return {}; }).then(function (b) { return { ok: r.ok, status: r.status, body: b }; }); })
      .then(function (res) {
        if (res.status === 403 && !retried && /CSRF/.test(res.body.error || "")) { // the server restarted: fetch a new token
          return fetch("/api/csrf", { credentials: "same-origin" }).then(function (r) { return r.json(); })
            .then(function (j) { csrf = j.csrf; return post(url, body, true); });
        }
        return res;
      });
  }

  showTab();
  connect();
})();
