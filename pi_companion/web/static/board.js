// The scoreboard: the latest snapshot over a WebSocket; reconnects for ever, each reconnect
// gets the latest snapshot at once. No build step, no library.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const text = (el, s) => { el.textContent = s; };
  let delay = 250;

  function row(p) {
    const tr = document.createElement("tr");
    tr.className = (p.turn ? "turn " : "") + (p.lit ? "lit" : "");
    const name = document.createElement("td"); name.className = "name"; text(name, p.name);
    const score = document.createElement("td"); score.className = "score";
    text(score, p.score === null || p.score === undefined ? "" : String(p.score));
    const now = document.createElement("td"); now.className = "now"; text(now, p.turn ? "turn" : "");
    tr.append(name, score, now);
    return tr;
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
      t.setAttribute("x", String(72 * Math.sin(a))); t.setAttribute("y", String(-72 * Math.cos(a) + 8));
      t.setAttribute("text-anchor", "middle"); t.textContent = label;
      g.append(line, t);
    });
  }

  // The outer ring fills towards the target (a full ring = on target); the needle shows the
  // quarter within the current turn; the words say the same, so colour is never the only signal.
  function drawDial(wind, w) {
    const steps = w.steps, goal = 4 * w.target, svg = wind.querySelector("svg");
    ticks(svg.querySelector(".ticks"));
    svg.querySelector(".needle").setAttribute("transform", "rotate(" + (((steps % 4) + 4) % 4) * 90 + ")");
    const frac = goal > 0 ? Math.max(0, Math.min(steps / goal, 1)) : (steps ? 1 : 0);
    const a = frac * 2 * Math.PI, r = 112, x = r * Math.sin(a), y = -r * Math.cos(a);
    svg.querySelector(".progress").setAttribute("d", frac >= 1
      ? "M 0 -112 A 112 112 0 1 1 -0.01 -112"
      : frac > 0 ? "M 0 -112 A 112 112 0 " + (frac > 0.5 ? 1 : 0) + " 1 " + x + " " + y : "");
    const state = steps === goal ? "on" : steps > goal ? "over" : "under";
    svg.setAttribute("class", "dial " + state);
    const left = goal - steps;
    text(wind.querySelector(".count .big"), w.player + ": " + quarters(steps) + " of " + w.target + " turns");
    text(wind.querySelector(".count .left"),
      left > 0 ? quarters(left) + " to go" : left < 0 ? quarters(-left) + " too many" : "on target \u2713");
  }

  // Another script on the page (host.js) may load after the first snapshot has arrived: it
  // finds that snapshot in window.latestSnapshot, and later ones through window.onSnapshot.
  function show(s) {
    window.latestSnapshot = s;
    try { render(s); } finally { if (window.onSnapshot) window.onSnapshot(s); }
  }

  function render(s) {
    document.body.dataset.seq = String(s.seq);
    document.body.dataset.game = s.game;
    text($("#title"), s.title);
    text($("#phase"), s.phase ? "phase: " + s.phase : "");
    text($("#notice"), s.notice || "");
    text($("#score-label"), s.score_label || "");
    const tbody = $("#players tbody");
    tbody.replaceChildren(...s.players.map(row));
    const buzz = $("#buzz");
    buzz.hidden = !s.buzz;
    if (s.buzz) {
      buzz.querySelector("ol").replaceChildren(...s.buzz.order.map((o, i) => {
        const li = document.createElement("li");
        if (i === 0) li.className = "first";
        text(li, o.player);
        if (i > 0) {
          const m = document.createElement("span"); m.className = "margin";
          text(m, " +" + Number(o.after_ms).toFixed(1) + " ms"); li.append(m);
        } else { li.append(" (first)"); }
        return li;
      }));
    }
    const wind = $("#wind");
    wind.hidden = !s.wind;
    if (s.wind) {
      drawDial(wind, s.wind);
    }
    const depths = $("#depths");
    depths.hidden = !s.depths;
    if (s.depths) {
      depths.querySelector("ul").replaceChildren(...Object.entries(s.depths).map(([name, d]) => {
        const li = document.createElement("li");
        text(li, name + ": " + d);
        const bar = document.createElement("span"); bar.className = "bar";
        bar.style.width = Math.max(0, Math.min(Number(d) || 0, 40)) * 0.4 + "rem";
        li.append(bar);
        return li;
      }));
    }
    text($("#guide"), s.guide || "");
    const winners = $("#winners");
    winners.hidden = !(s.over && s.winners.length);
    text(winners.querySelector("p"), s.winners.join(", "));
  }

  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.onopen = () => { delay = 250; text($("#status"), "live"); };
    ws.onmessage = (ev) => { try { show(JSON.parse(ev.data)); } catch (e) { console.error(e); } };
    ws.onclose = () => {
      text($("#status"), "reconnecting\u2026");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 4000);
    };
  }
  connect();
})();
