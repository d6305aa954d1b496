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
          text(m, " +" + o.after_ms + " ms"); li.append(m);
        } else { li.append(" (first)"); }
        return li;
      }));
    }
    const wind = $("#wind");
    wind.hidden = !s.wind;
    if (s.wind) {
      const turns = s.wind.turns;
      wind.querySelector(".needle").style.transform = "rotate(" + (turns * 360) + "deg)";
      text(wind.querySelector(".count"), s.wind.player + ": " + turns.toFixed(2) + " / " + s.wind.target + " turns");
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
    if (window.onSnapshot) window.onSnapshot(s);
  }

  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.onopen = () => { delay = 250; text($("#status"), "live"); };
    ws.onmessage = (ev) => { try { render(JSON.parse(ev.data)); } catch (e) { console.error(e); } };
    ws.onclose = () => {
      text($("#status"), "reconnecting\u2026");
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 4000);
    };
  }
  connect();
})();
