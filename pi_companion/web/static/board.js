// The scoreboard: the latest snapshot over a WebSocket; reconnects for ever, each reconnect
// gets the latest snapshot at once. No build step, no library, nothing fetched from elsewhere.
// The snapshot carries the words (core/snapshot.py: `moment`, `facts`, each player's `note`);
// this draws them, plays each player's buzz tune through Web Audio and, if asked, says the
// winner (speechSynthesis).
// Connection, three states: "live"; "offline" (the web process says the box is gone: its hub
// socket closed or went quiet); "reconnecting" (the web process itself is away: the socket
// closed, or nothing heard for 3 s although it sends a beat every second - a box that lost its
// power closes nothing). Each is shown on the page and told to the host page (the
// `board:connection` event, `live` false unless live) so that it disables its commands.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const text = (el, s) => { if (el) el.textContent = s; };
  let delay = 250;

  // Each player's button colour (the box's [box] colours, P1 first); the number in the badge
  // says the same (colour is never the only sign of who is who).
  const COLOURS = ["#e5484d", "#3e8ef7", "#30a46c", "#f5d90a", "#f76b15", "#a070e0", "#eeeeee", "#00c2d7"];

  function light(hex) {            // dark figures on a light colour (yellow, white, cyan)
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.6;
  }

  function badge(p) {
    const b = document.createElement("span");
    b.className = "badge";
    const colour = /^#[0-9a-f]{6}$/.test(p.colour || "") ? p.colour : COLOURS[(p.n - 1) % COLOURS.length];
    b.style.setProperty("--pc", colour);
    if (light(colour)) b.classList.add("light");
    text(b, String(p.n));
    return b;
  }

  function row(p, s) {
    const li = document.createElement("li");
    const winner = s.over && s.winners.includes(p.name);
    li.className = "player" + (p.turn ? " turn" : "") + (p.lit ? " lit" : "") + (winner ? " winner" : "");
    const who = document.createElement("span"); who.className = "who";
    const name = document.createElement("span"); name.className = "name"; text(name, p.name);
    who.append(name);
    if (p.out) li.classList.add("out");
    const noteText = winner ? "\u2605 winner" : p.turn ? "\u25B6 " + (s.turn_word || "their turn") + (p.note ? " \u00b7 " + p.note : "")
      : p.note;
    if (noteText) {
      const note = document.createElement("span"); note.className = "note"; text(note, noteText);
      who.append(note);
    }
    const score = document.createElement("span"); score.className = "score";
    text(score, p.score === null || p.score === undefined ? "" : String(p.score));
    li.append(badge(p), who, score);
    return li;
  }

  // Turns in quarters, as the hall sensor counts them: 9 steps -> "2\u00bc".
  const QUARTERS = ["", "\u00bc", "\u00bd", "\u00be"];
  function quarters(steps) {
    const n = Math.abs(Math.round(steps)), whole = Math.floor(n / 4), q = QUARTERS[n % 4];
    return (steps < 0 ? "\u2212" : "") + (whole || !q ? String(whole) : "") + q;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function ticks(g) {           // the quarter marks, drawn once: 0 at the top, clockwise
    if (g.childNodes.length) return;
    ["0", "\u00bc", "\u00bd", "\u00be"].forEach((label, i) => {
      const a = i * Math.PI / 2, line = document.createElementNS(SVG, "line");
      line.setAttribute("x1", String(90 * Math.sin(a))); line.setAttribute("y1", String(-90 * Math.cos(a)));
      line.setAttribute("x2", String(100 * Math.sin(a))); line.setAttribute("y2", String(-100 * Math.cos(a)));
      const t = document.createElementNS(SVG, "text");
      t.setAttribute("x", String(68 * Math.sin(a))); t.setAttribute("y", String(-68 * Math.cos(a) + 10));
      t.setAttribute("text-anchor", "middle"); t.textContent = label;
      g.append(line, t);
    });
  }

  // The outer ring fills towards the target (a full ring = on target); the needle shows the
  // quarter within the current turn; the words say the same, so colour is never the only signal.
  function drawDial(w) {
    const steps = w.steps, goal = 4 * w.target, svg = $("#wind svg");
    ticks(svg.querySelector(".ticks"));
    svg.querySelector(".needle").setAttribute("transform", "rotate(" + (((steps % 4) + 4) % 4) * 90 + ")");
    const frac = goal > 0 ? Math.max(0, Math.min(steps / goal, 1)) : (steps ? 1 : 0);
    const a = frac * 2 * Math.PI, r = 112, x = r * Math.sin(a), y = -r * Math.cos(a);
    svg.querySelector(".progress").setAttribute("d", frac >= 1
      ? "M 0 -112 A 112 112 0 1 1 -0.01 -112"
      : frac > 0 ? "M 0 -112 A 112 112 0 " + (frac > 0.5 ? 1 : 0) + " 1 " + x + " " + y : "");
    svg.setAttribute("class", "dial " + (steps === goal ? "on" : steps > goal ? "over" : "under"));
    const left = goal - steps;
    text($("#wind-count .big"), w.player + ": " + quarters(steps) + " of " + w.target + (w.target === 1 ? " turn" : " turns"));
    text($("#wind-count .left"),
      left > 0 ? quarters(left) + " to go" : left < 0 ? quarters(-left) + " too many" : "on target \u2713");
  }

  const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };
  function drawDie(el, n) {
    el.classList.toggle("rolling", !n);
    el.replaceChildren(...Array.from({ length: 9 }, (_, i) => {
      const cell = document.createElement("span");
      if (n && PIPS[n] && PIPS[n].includes(i)) cell.className = "pip";
      return cell;
    }));
  }

  // Hold Your Breath!: one column per diver, the surface at the top; the marker sits at the
  // diver's depth (an anchor line where the descent ended), the number says it in feet.
  function drawDepths(el, m, players) {
    const depths = m.depths || {}, deepest = Math.max(40, ...Object.values(depths).map(Number));
    el.replaceChildren(...players.map((p) => {
      const li = document.createElement("li");
      const d = Number(depths[p.name] || 0);
      li.className = "diver" + (p.turn ? " turn" : "") + (m.surfaced.includes(p.name) ? " surfaced" : "");
      const well = document.createElement("span"); well.className = "well";
      const mark = document.createElement("span"); mark.className = "mark";
      mark.append(badge(p));
      mark.style.top = (10 + 80 * d / deepest) + "%";        // the badge stays inside the well
      well.append(mark);
      // The name on a line of its own, the depth under it: with the turn's sign and bold type
      // a name and its depth on one line did not fit a quarter of a TV.
      const label = document.createElement("span"); label.className = "label";
      const nm = document.createElement("span"); nm.className = "diver-name"; text(nm, p.name);
      const ft = document.createElement("span"); ft.className = "diver-depth"; text(ft, d + " ft");
      label.append(nm, ft);
      li.append(well, label);
      return li;
    }));
  }

  const TITLES = { buzz: "First to press", wind: "Wind check", verdict: "Wind check", beat: "Flip!",
                   die: "The die", depths: "Under water", winners: "Game over", menu: "Menu" };
  function drawMoment(s) {
    const m = s.moment || { kind: "text", big: s.phase || "", small: "" };
    document.body.dataset.screen = m.kind === "menu" || m.kind === "card" ? m.kind : "";
    const box = $("#moment");
    box.dataset.kind = m.kind;
    box.dataset.verdict = m.verdict || "";
    text(box.querySelector(".moment-title"), m.title || TITLES[m.kind] || "");
    text(box.querySelector(".words > .big"), m.big || "");
    text(box.querySelector(".words > .small"), m.small || "");
    text(box.querySelector(".ask"), m.ask || "");
    $("#wind").hidden = m.kind !== "wind";
    $("#wind-count").hidden = m.kind !== "wind";
    if (m.kind === "wind" && s.wind) drawDial(s.wind);
    $("#die").hidden = m.kind !== "die";
    if (m.kind === "die") drawDie($("#die"), m.die);
    const beat = $("#beat");
    beat.hidden = m.kind !== "beat";
    if (m.kind === "beat") {
      beat.className = "beat " + (m.paused ? "paused" : m.beats % 2 ? "odd" : "even");
      text(beat, m.paused ? "\u275A\u275A" : "");
    }
    const mark = $("#verdict-mark");
    mark.hidden = m.kind !== "verdict";
    text(mark, m.verdict === "exact" ? "\u2713" : "\u2717");
    $("#depths").hidden = m.kind !== "depths";
    if (m.kind === "depths") drawDepths($("#depths"), m, s.players);
    $("#trophy").hidden = m.kind !== "winners";
    drawScreen(m);
    const who = s.players.find((p) => p.name === m.player);          // whose moment: their badge
    const slot = $("#who");
    slot.replaceChildren(...(who && m.kind !== "depths" ? [badge(who)] : []));
    slot.hidden = !who || m.kind === "depths";
    const order = $("#buzz");
    order.hidden = m.kind !== "buzz";
    if (m.kind === "buzz") {
      order.replaceChildren(...m.order.map((o, i) => {
        const li = document.createElement("li");
        if (i === 0) li.className = "first";
        text(li, o.player);
        const t = document.createElement("span"); t.className = "margin";
        text(t, i === 0 ? " (first)" : " +" + Number(o.after_ms).toFixed(1) + " ms");
        li.append(t);
        return li;
      }));
    }
  }

  // The box's own screens (its menu, a text card, the bank's table, a question): the same
  // entries and lines the OLED shows, all of them at once (in two columns when many), the cursor's
  // entry marked with a sign as well as a colour, a greyed entry said to be greyed.
  function drawScreen(m) {
    const items = $("#menu-items"), lines = $("#card-lines"), table = $("#card-table");
    items.hidden = m.kind !== "menu";
    // More entries than a 720p TV holds in one column at its reading size: two columns.
    items.classList.toggle("two-cols", m.kind === "menu" && m.items.length > 10);
    items.replaceChildren(...(m.kind === "menu" ? m.items : []).map((e) => {
      const li = document.createElement("li");
      li.className = (e.selected ? "selected" : "") + (e.enabled ? "" : " greyed");
      text(li, (e.selected ? "\u25B6 " : "") + e.label + (e.enabled ? "" : " (not now)"));
      return li;
    }));
    const card = m.kind === "card" ? m : {};
    lines.hidden = !(card.lines && card.lines.length);
    lines.replaceChildren(...(card.lines || []).map((l) => { const li = document.createElement("li"); text(li, l); return li; }));
    table.hidden = !card.rows;
    const cells = (tag, row) => { const tr = document.createElement("tr");
      tr.append(...row.map((c) => { const td = document.createElement(tag); text(td, c); return td; })); return tr; };
    table.tHead.replaceChildren(...(card.head ? [cells("th", card.head)] : []));
    table.tBodies[0].replaceChildren(...(card.rows || []).map((r) => {
      const tr = cells("td", r.mark ? ["\u25B6 " + r.cells[0]].concat(r.cells.slice(1)) : r.cells);
      if (r.mark) tr.className = "selected";
      return tr;
    }));
  }

  // ---- sound: each player's buzz tune (the box's piezo tunes) and the winner's name ----
  const store = window.localStorage;
  const sound = { sound: store && store.getItem("sound") === "on", voice: store && store.getItem("voice") === "on", ctx: null };
  const SEMI = { C: 0, D: 2, E: 4, F: 5, G: 7, A: 9, B: 11 };
  function freq(note) {
    const m = /^([A-G])([#b]?)([0-9])$/.exec(note);
    if (!m) return 0;
    const midi = 12 * (Number(m[3]) + 1) + SEMI[m[1]] + (m[2] === "#" ? 1 : m[2] === "b" ? -1 : 0);
    return 440 * Math.pow(2, (midi - 69) / 12);
  }
  function audio() {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!sound.ctx && Ctx) sound.ctx = new Ctx();
    if (sound.ctx && sound.ctx.state === "suspended") sound.ctx.resume();
    return sound.ctx;
  }
  function playTune(tune) {               // as the piezo: 70 ms a note, 20 ms between notes
    const ctx = audio();
    if (!ctx) return;
    let t = ctx.currentTime + 0.01;
    tune.split(/\s+/).filter(Boolean).forEach((note) => {
      const f = freq(note);
      if (!f) return;
      const osc = ctx.createOscillator(), gain = ctx.createGain();
      osc.type = "square"; osc.frequency.value = f;
      gain.gain.setValueAtTime(0.12, t); gain.gain.setValueAtTime(0, t + 0.07);
      osc.connect(gain).connect(ctx.destination);
      osc.start(t); osc.stop(t + 0.075);
      t += 0.09;
    });
  }
  function say(words) {
    if (!window.speechSynthesis || !window.SpeechSynthesisUtterance) return;
    window.speechSynthesis.cancel();
    window.speechSynthesis.speak(new SpeechSynthesisUtterance(words));
  }
  function drawToggles() {
    const b = $("#sound"), v = $("#voice");
    if (b) { b.setAttribute("aria-pressed", String(sound.sound)); text(b, "\u266B Sound " + (sound.sound ? "on" : "off")); }
    if (v) { v.setAttribute("aria-pressed", String(sound.voice)); text(v, "Say winner " + (sound.voice ? "on" : "off")); }
  }
  function toggle(key) {
    sound[key] = !sound[key];
    if (store) store.setItem(key, sound[key] ? "on" : "off");
    if (sound[key] && key === "sound") audio();          // a tap: the browser lets audio start
    drawToggles();
  }
  let heard = null;         // the last buzz and game-over state seen (none before the first snapshot)
  function listen(s) {
    const buzz = s.buzz ? JSON.stringify(s.buzz) : "", over = s.over ? s.game + ":" + s.winners.join(",") : "";
    if (heard !== null) {
      if (buzz && buzz !== heard.buzz) {
        const p = s.players.find((q) => q.name === s.buzz.winner);
        if (p) {
          document.body.dataset.lastTune = p.n + ":" + p.tune;
          if (sound.sound && p.tune) playTune(p.tune);
        }
      }
      if (over && over !== heard.over && s.moment) {
        document.body.dataset.lastWords = s.moment.big;
        if (sound.voice) say(s.moment.big);
      }
    }
    heard = { buzz: buzz, over: over };
  }

  // Another script on the page (host.js) may load after the first snapshot has arrived: it
  // finds that snapshot in window.latestSnapshot, and later ones through window.onSnapshot.
  function show(s) {
    window.latestSnapshot = s;
    try { render(s); listen(s); } finally {
      if (window.onSnapshot) window.onSnapshot(s);
      if (window.onEvening) window.onEvening(s);           // evening.js: standings, podium
    }
  }

  let oldNotice = null;
  function render(s) {
    document.body.dataset.seq = String(s.seq);
    document.body.dataset.game = s.game;
    document.body.classList.toggle("over", !!s.over);
    document.body.classList.toggle("many", s.players.length > 4);     // a compact table
    text($("#title"), s.title);
    const facts = $("#facts");
    if (facts) {
      facts.replaceChildren(...(s.facts || []).map((f) => {
        const li = document.createElement("li");
        const label = document.createElement("span"); label.className = "label"; text(label, f.label + " ");
        const value = document.createElement("b"); text(value, f.value);
        li.append(label, value);
        return li;
      }));
    }
    // A notice answers the input that made it: one already standing when the page opened
    // ("Undone: Change game" from an hour ago) is not shown until the table says something new.
    if (oldNotice === null) oldNotice = s.notice || "";
    else if ((s.notice || "") !== oldNotice) oldNotice = "";
    text($("#notice"), s.notice && s.notice !== oldNotice ? s.notice : "");
    text($("#score-label"), s.score_label || "");
    // The final table: winners first, then by score the way it wins (seat order otherwise).
    const sign = s.score_wins === "high" ? -1 : s.score_wins === "low" ? 1 : 0;
    const players = s.over ? s.players.slice().sort((a, b) =>
      (Number(s.winners.includes(b.name)) - Number(s.winners.includes(a.name))) ||
      sign * ((a.score || 0) - (b.score || 0)) || a.n - b.n) : s.players;
    $("#players").replaceChildren(...players.map((p) => row(p, s)));
    drawMoment(s);
    const guide = s.moment && s.moment.kind === "text" && s.guide === s.moment.big ? "" : (s.guide || "");
    text($("#guide"), guide ? "Round guide: " + guide : "");
    drawJoin();
  }

  // Join from the TV: a QR code of this board's address (the web process makes it from the
  // address it tells the box, never with the host's token) and the address to type.
  let joinAsked = false;
  function drawJoin() {
    const join = $("#join");
    if (!join || joinAsked) return;
    joinAsked = true;
    fetch("/api/join", { cache: "no-store", credentials: "omit" }).then((r) => r.json()).then((j) => {
      if (!j.url) return;
      $("#join-qr").src = "/join.svg";
      text($("#join-url"), j.url.replace(/^http:\/\//, "").replace(/\/$/, ""));
      join.hidden = false;
    }).catch(() => { joinAsked = false; });
  }

  const SILENT_MS = 3000, OPENING_MS = 5000;
  const banner = $("#offline"), away = banner ? banner.textContent : "";
  const OFFLINE = "Box offline: no word from it. The board shows the last it knew." +
    (document.body.classList.contains("host") ? " Commands wait." : "");
  let socket = null, open = false, box = null, lastHeard = 0, opened = 0;

  function connected() {
    const state = !open || box === null ? "reconnecting" : box ? "live" : "offline", live = state === "live";
    if (document.body.dataset.connection === state) return;
    window.boardLive = live;
    document.body.dataset.connection = state;
    document.body.classList.toggle("offline", !live);
    if (banner) { banner.hidden = live; text(banner, state === "offline" ? OFFLINE : away); }
    text($("#status"), live ? "live" : state === "offline" ? "box offline" : "reconnecting\u2026");
    document.dispatchEvent(new CustomEvent("board:connection", { detail: { live: live, state: state } }));
  }

  function retry() {
    open = false; box = null; socket = null;
    connected();
    setTimeout(connect, delay);
    delay = Math.min(delay * 2, 2000);
  }

  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    socket = ws; opened = Date.now();
    ws.onopen = () => { delay = 250; open = true; lastHeard = Date.now(); };     // live at its "link"
    ws.onmessage = (ev) => {
      lastHeard = Date.now();
      try {
        const msg = JSON.parse(ev.data);
        if (msg.type === "link") { box = !!msg.box; connected(); }
        else if (msg.type !== "beat") show(msg);
      } catch (e) { console.error(e); }
    };
    ws.onclose = () => { if (socket === ws) retry(); };
  }
  // A connection that says nothing (the process stopped, the box lost power, the Wi-Fi went)
  // is given up on, not waited for: its close could take minutes.
  setInterval(() => {
    const ws = socket, now = Date.now();
    if (ws && (open ? now - lastHeard > SILENT_MS : now - opened > OPENING_MS)) {
      socket = null;
      ws.onclose = ws.onmessage = ws.onopen = null;
      try { ws.close(); } catch (e) { /* already closing */ }
      retry();
    }
  }, 500);
  window.boardLive = false;
  document.addEventListener("DOMContentLoaded", drawToggles);
  drawToggles();
  if ($("#sound")) $("#sound").addEventListener("click", () => toggle("sound"));
  if ($("#voice")) $("#voice").addEventListener("click", () => toggle("voice"));
  connect();
})();
