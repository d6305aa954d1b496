// The host's remote: every control of the box (YES, NO, long YES, undo, the dial, the game's
// own menu entries, New game, Players, Change game) as a command that enters the box's queue and
// log like a press. Each command's result is written in the <output> beside the control that
// sent it: first the box's answer (taken or refused, and why), then what the table said of it
// (its notice, such as "Undone: New game" or "Rename refused").
//
// The token arrives in the URL fragment (never sent to the server, never in its logs), moves to
// sessionStorage at once and goes with each command as a header.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const make = (tag, props) => Object.assign(document.createElement(tag), props || {});
  const token = () => sessionStorage.getItem("hostToken") || "";
  // Also when the page is open already: a new host QR scanned into the same tab changes only
  // the fragment, which reloads nothing.
  function takeToken() {
    const m = location.hash.match(/[#&]t=([A-Za-z0-9_-]+)/);
    if (m) {
      sessionStorage.setItem("hostToken", m[1]);
      history.replaceState(null, "", location.pathname);
    }
    $("#hoststate").textContent = token() ? "host remote" : "read only: scan the host QR on the box";
  }
  takeToken();
  window.addEventListener("hashchange", takeToken);

  let latest = window.latestSnapshot || null;
  let live = window.boardLive === true;
  let catalogue = [];                       // /api/games: each game's player range and options
  // What the table says after a command: a notice that refuses is shown with a cross.
  const REFUSAL = /refused|not now|is a buzz|nothing to undo|cannot|not kept|bad game options|takes \d|player buttons/i;
  let watching = null;                      // {out, seq, notice, after}: the next snapshots' notice

  async function send(cmd, out, after) {
    out.textContent = "\u2026";
    out.classList.remove("bad");
    const seq = latest ? latest.seq : 0, notice = latest ? latest.notice : "";
    try {
      const r = await fetch("/api/command", {
        method: "POST", headers: { "Content-Type": "application/json", "X-Host-Token": token() },
        body: JSON.stringify(cmd), cache: "no-store", credentials: "omit",
      });
      const body = await r.json();
      if (!body.ok) {
        out.textContent = "\u2717 " + body.error;
        out.classList.add("bad");
        if (after) after(false);
        return false;
      }
      out.textContent = body.saved === false ? "\u2713 done, " + body.error : "\u2713 done";
      const w = { out: out, seq: seq, notice: notice, after: after, until: Date.now() + 3000 };
      watching = w;
      if (latest && latest.seq > seq) told(latest);
      // Nothing on the board changed (no new snapshot): a refusal standing on it is the answer
      // (a second "Nothing to undo" is no change), else the command did nothing now.
      setTimeout(() => {
        if (watching !== w || !latest || latest.seq > w.seq) return;
        watching = null;
        const refused = REFUSAL.test(latest.notice || "");
        out.textContent = refused ? "\u2717 " + latest.notice : "\u2713 done: nothing changed";
        out.classList.toggle("bad", refused);
        if (after) after(!refused);
      }, 1200);
      return true;
    } catch (e) {
      out.textContent = "\u2717 no answer from the box";
      out.classList.add("bad");
      if (after) after(false);
      return false;
    }
  }

  // A snapshot after a command: its notice (if new) is what the table made of the command.
  function told(s) {
    const w = watching;
    if (!w || s.seq <= w.seq) return;
    if (Date.now() > w.until) { watching = null; return; }
    if (s.notice && s.notice !== w.notice) {
      const refused = REFUSAL.test(s.notice);
      w.out.textContent = (refused ? "\u2717 " : "\u2713 ") + s.notice;
      w.out.classList.toggle("bad", refused);
      watching = null;
      if (w.after) w.after(!refused);
    } else if (w.after) {
      w.after(true);
    }
  }

  // New game, Players, Change game: a first tap arms the button (its words ask for a second),
  // a second tap within 4 s sends; any other tap, or the time, disarms it.
  function confirmed(button, action) {
    button.addEventListener("click", (ev) => {
      ev.preventDefault();
      if (button.dataset.armed === "1") {
        disarm(button);
        action();
        return;
      }
      document.querySelectorAll("[data-armed='1']").forEach(disarm);
      button.dataset.label = button.textContent;
      button.dataset.armed = "1";
      button.textContent = button.dataset.confirm;
      button.classList.add("armed");
      button._timer = setTimeout(() => disarm(button), 4000);
    });
  }
  function disarm(button) {
    if (button.dataset.armed !== "1") return;
    clearTimeout(button._timer);
    button.dataset.armed = "";
    button.textContent = button.dataset.label;
    button.classList.remove("armed");
  }

  // ---- YES, NO, long YES, undo, the dial ----
  document.querySelectorAll("button[data-cmd]").forEach((b) => b.addEventListener("click", () => {
    const cmd = { cmd: b.dataset.cmd };
    if (b.dataset.delta) cmd.delta = Number(b.dataset.delta);
    send(cmd, b.dataset.cmd === "dial" ? $("#game-result") : $("#result"));
  }));
  confirmed($("#new"), () => send({ cmd: "new" }, $("#new-result")));
  confirmed($("#end-evening"), () => send({ cmd: "end-evening" }, $("#evening-result")));

  // ---- a player's button, pressed or held for them (a die roll, "who holds nothing?", a gate
  // claim): the box refuses a press that would be a buzz, which only the buttons decide ----
  let behalfDrawn = "";
  function drawBehalf(s) {
    const key = s.players.map((p) => p.name).join("\n");
    if (key === behalfDrawn) return;
    behalfDrawn = key;
    const pick = $("#behalf-player"), keep = pick.value;
    pick.replaceChildren(...s.players.map((p, i) => make("option", { value: String(i), textContent: p.n + " " + p.name })));
    if (keep && Number(keep) < s.players.length) pick.value = keep;
  }
  document.querySelectorAll("button[data-behalf]").forEach((b) => b.addEventListener("click", () =>
    send({ cmd: b.dataset.behalf, player: Number($("#behalf-player").value) }, $("#behalf-result"))));

  // ---- the game's own menu entries (Pause beats, Brain tokens, ...), as the box's menu has them ----
  let entriesDrawn = "";
  function drawEntries(s) {
    const entries = (s.host && s.host.entries) || [];
    const key = JSON.stringify(entries);
    if (key === entriesDrawn) return;
    entriesDrawn = key;
    const buttons = [...document.querySelectorAll("#entries button")];
    if (buttons.length === entries.length && buttons.every((b, i) => b.dataset.key === entries[i].key)) {
      buttons.forEach((b, i) => {            // the same entries: greyed or not, in place (a tap stays)
        b.textContent = entries[i].label;
        b.dataset.enabled = entries[i].enabled ? "1" : "";
      });
      commands(live);
      return;
    }
    $("#entries").replaceChildren(...entries.map((e) => {
      const b = make("button", { type: "button", textContent: e.label });
      b.dataset.key = e.key;
      b.dataset.enabled = e.enabled ? "1" : "";
      b.addEventListener("click", () => send({ cmd: "menu", key: e.key }, $("#game-result")));
      return b;
    }));
    $("#entries").hidden = entries.length === 0;
    commands(live);
  }
  const SPECIAL = { "hands-up": "Police (long YES)", "all-wound-up": "Tokens (long YES)" };
  const DIAL = { "hands-up": ["\u25C0 Slower", "Faster \u25B6"] };
  function drawLabels(s) {
    $("#special").textContent = SPECIAL[s.game] || "Long YES";
    const [down, up] = DIAL[s.game] || ["\u25C0 Dial", "Dial \u25B6"];
    $("#dial-down").textContent = down;
    $("#dial-up").textContent = up;
  }

  // ---- names: a rename per field, its result beside it ----
  let names = "";
  function drawNames(s) {
    const now = s.players.map((p) => p.name).join("\n");
    if (now === names) return;
    const fields = document.querySelectorAll("#names input");
    if (fields.length === s.players.length) {   // the same seats: new names in place, results kept
      fields.forEach((input, i) => { if (input !== document.activeElement) input.value = s.players[i].name; });
      names = now;
      return;
    }
    if (document.activeElement && document.activeElement.closest("#names")) return;   // not mid-typing
    names = now;
    $("#names").replaceChildren(...s.players.map((p, i) => {
      const label = make("label", { textContent: "Player " + (i + 1) + " " });
      const input = make("input", { value: p.name, maxLength: 16, name: "p" + i });
      input.dataset.player = String(i);
      const out = make("output", { className: "result" });
      input.addEventListener("change", () => send({ cmd: "rename", player: i, name: input.value }, out, (ok) => {
        if (!ok && latest) input.value = latest.players[i] ? latest.players[i].name : input.value;  // put back
      }));
      label.append(input, out);
      return label;
    }));
    commands(live);
  }

  // ---- players for a new game: how many (the game's range, the box's buttons), names, order ----
  let seatsEdited = false;
  function seatNames() {
    return [...document.querySelectorAll("#seats input")].map((i) => i.value.trim());
  }
  function drawSeats(list) {
    $("#seats").replaceChildren(...list.map((name, i) => {
      const li = make("li");
      const input = make("input", { value: name, maxLength: 16, ariaLabel: "Player " + (i + 1) });
      input.addEventListener("input", () => { seatsEdited = true; });
      const up = make("button", { type: "button", textContent: "\u2191", title: "earlier", ariaLabel: "Move up" });
      up.disabled = i === 0;
      up.addEventListener("click", () => {
        const now = seatNames();
        [now[i - 1], now[i]] = [now[i], now[i - 1]];
        seatsEdited = true;
        drawSeats(now);
      });
      li.append(input, up);
      return li;
    }));
    commands(live);
    document.querySelectorAll("#seats li:first-child button").forEach((b) => { b.disabled = true; });
  }
  function range(s) {
    const game = catalogue.find((g) => g.name === s.game);
    const seats = (s.host && s.host.seats) || 8;
    return game ? [game.min_players, Math.min(game.max_players, seats)] : [2, seats];
  }
  let countDrawn = "";
  function drawPlayers(s) {
    const [lo, hi] = range(s);
    const key = lo + ":" + hi;
    if (key !== countDrawn) {
      countDrawn = key;
      const count = $("#count");
      const keep = count.value;
      count.replaceChildren(...Array.from({ length: hi - lo + 1 }, (_, k) =>
        make("option", { value: String(lo + k), textContent: String(lo + k) })));
      count.value = keep && Number(keep) >= lo && Number(keep) <= hi ? keep : String(Math.min(hi, Math.max(lo, s.players.length)));
    }
    if (!seatsEdited) {
      $("#count").value = String(Math.min(hi, Math.max(lo, s.players.length)));
      fitSeats(s.players.map((p) => p.name));
    }
  }
  function fitSeats(from) {
    const n = Number($("#count").value);
    const list = from.slice(0, n);
    // As MENU > Players names them: seat i gets the first P-number from i that is free.
    while (list.length < n) {
      let j = list.length + 1;
      while (list.includes("P" + j)) j++;
      list.push("P" + j);
    }
    drawSeats(list);
  }
  $("#count").addEventListener("change", () => { seatsEdited = true; fitSeats(seatNames()); });
  confirmed($("#set-players"), () => send({ cmd: "players", names: seatNames() }, $("#players-result"), (ok) => {
    if (ok) seatsEdited = false;
  }));
  $("#players-form").addEventListener("submit", (ev) => ev.preventDefault());

  // ---- change game: the game, and its options as the game declares them ----
  function optionControl(opt, value, players) {
    const label = make("label", { textContent: opt.label + " " });
    let field;
    if (opt.kind === "choice" || opt.kind === "player") {
      field = make("select");
      const choices = opt.kind === "choice" ? opt.choices : players;
      field.append(make("option", { value: "", textContent: opt.default === null ? "(the game's default)" : "(" + opt.default + ")" }),
        ...choices.map((c) => make("option", { value: c, textContent: c })));
      field.value = value !== undefined && choices.includes(value) ? value : "";
    } else {
      const lo = opt.lo_players ? Math.max(opt.lo, players.length) : opt.lo;   // a card each at least
      field = make("input", { type: "number", min: String(lo), max: String(opt.hi), step: String(opt.step),
                              inputMode: "numeric", value: String(value !== undefined ? value : opt.default) });
    }
    field.dataset.key = opt.key;
    field.dataset.kind = opt.kind;
    field.dataset.default = opt.default === null ? "" : String(opt.default);
    label.append(field);
    if (opt.zero) {                          // 0 lies outside the range and means something else
      const box = make("input", { type: "checkbox", checked: value === 0 });
      box.dataset.zeroFor = opt.key;
      const z = make("label", { className: "zero" });
      z.append(box, " " + opt.zero);
      if (value === 0) field.value = String(opt.default);
      field.disabled = value === 0;
      box.addEventListener("change", () => { field.disabled = box.checked || !live; });
      return [label, z];
    }
    return [label];
  }
  function chosenGame() { return catalogue.find((g) => g.name === $("#game").value); }
  function drawOptions() {
    const game = chosenGame();
    if (!game || !latest) return;
    const current = game.name === latest.game ? (latest.host && latest.host.options) || {} : {};
    const players = latest.players.map((p) => p.name);
    $("#options").replaceChildren(...game.options.flatMap((o) => optionControl(o, current[o.key], players)));
    $("#options").dataset.game = game.name;
    fits();
    commands(live);
  }
  function fits() {
    const game = chosenGame();
    if (!game || !latest) return;
    const n = latest.players.length;
    const ok = n >= game.min_players && n <= game.max_players;
    $("#players-fit").textContent = game.title + ": " + game.min_players + " to " + game.max_players +
      " players" + (ok ? "" : " (" + n + " playing: set the players first)");
    $("#change").dataset.fits = ok ? "1" : "";
    commands(live);
  }
  // The options as the game's new_game takes them; a value out of range is said here, unsent.
  function options() {
    const out = {};
    for (const field of document.querySelectorAll("#options [data-key]")) {
      const zero = document.querySelector("#options [data-zero-for='" + field.dataset.key + "']");
      if (zero && zero.checked) { out[field.dataset.key] = 0; continue; }
      if (field.value === "") continue;
      if (field.dataset.kind === "int") {
        const v = Number(field.value);
        if (!Number.isInteger(v) || v < Number(field.min) || v > Number(field.max))
          throw new Error(field.parentElement.firstChild.textContent.trim() + ": a whole number from " + field.min + " to " + field.max);
        out[field.dataset.key] = v;   // every value said (none: the box keeps the game's last ones)
      } else {
        out[field.dataset.key] = field.value;
      }
    }
    return out;
  }
  confirmed($("#change"), () => {
    let opts;
    try { opts = options(); } catch (e) {
      $("#switch-result").textContent = "\u2717 " + e.message;
      $("#switch-result").classList.add("bad");
      return;
    }
    send({ cmd: "switch", game: $("#game").value, options: opts }, $("#switch-result"));
  });
  $("#switch").addEventListener("submit", (ev) => ev.preventDefault());
  $("#game").addEventListener("change", () => { $("#game").dataset.touched = "1"; drawOptions(); });
  let optionsFor = "";
  function drawSwitch(s) {
    const game = $("#game");
    if (game.dataset.touched !== "1" && game.value !== s.game) game.value = s.game;
    const key = s.game + JSON.stringify(s.host ? s.host.options : {}) + s.players.map((p) => p.name).join(",");
    if (key !== optionsFor && !(document.activeElement && document.activeElement.closest("#switch"))) {
      optionsFor = key;
      drawOptions();
    }
    fits();
  }
  fetch("/api/games", { cache: "no-store", credentials: "omit" }).then((r) => r.json()).then((games) => {
    catalogue = games;
    $("#game").replaceChildren(...games.map((g) => make("option", { value: g.name, textContent: g.title })));
    if (latest) { countDrawn = ""; optionsFor = ""; window.onSnapshot(latest); }
  }).catch(() => { $("#switch-result").textContent = "\u2717 no list of games from the box"; });

  window.onSnapshot = (s) => {
    latest = s;
    drawLabels(s);
    drawEntries(s);
    drawBehalf(s);
    drawNames(s);
    if (catalogue.length) { drawPlayers(s); drawSwitch(s); }
    told(s);
  };
  // While the page has no connection (the web process is away) nothing it sends could be
  // shown: the commands are disabled until board.js says it is live again. A greyed game entry
  // (as on the box's menu) and Change game to a game these players cannot play stay disabled.
  function commands(on) {
    live = on;
    document.querySelectorAll(".remote button, .remote input, .remote select").forEach((el) => {
      el.disabled = !on || el.dataset.enabled === "" || el.id === "change" && el.dataset.fits === "";
    });
    document.querySelectorAll("#seats li:first-child button").forEach((b) => { b.disabled = true; });
    document.querySelectorAll("#options [data-zero-for]").forEach((box) => {
      const field = document.querySelector("#options [data-key='" + box.dataset.zeroFor + "']");
      if (field) field.disabled = !on || box.checked;
    });
  }
  document.addEventListener("board:connection", (ev) => commands(ev.detail.live));
  commands(live);
  // board.js may have drawn the first snapshot before this script ran (the two load in
  // parallel; the WebSocket can win): show the controls from it now, not at the next change.
  if (window.latestSnapshot) window.onSnapshot(window.latestSnapshot);
  $("#names").addEventListener("submit", (ev) => ev.preventDefault());
})();
