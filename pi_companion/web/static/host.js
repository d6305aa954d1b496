// The host's remote: the token arrives in the URL fragment (never sent to the server, never in
// its logs), moves to sessionStorage at once and goes with each command as a header.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
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

  async function send(cmd) {
    const result = $("#result");
    result.textContent = "\u2026";
    try {
      const r = await fetch("/api/command", {
        method: "POST", headers: { "Content-Type": "application/json", "X-Host-Token": token() },
        body: JSON.stringify(cmd), cache: "no-store", credentials: "omit",
      });
      const body = await r.json();
      result.textContent = body.ok ? "\u2713 done" : "\u2717 " + body.error;
    } catch (e) {
      result.textContent = "\u2717 no answer from the box";
    }
  }

  document.querySelectorAll("button[data-cmd]").forEach((b) =>
    b.addEventListener("click", () => send({ cmd: b.dataset.cmd })));

  let names = "";
  window.onSnapshot = (s) => {
    const now = s.players.map((p) => p.name).join("\n");
    if (now === names || document.activeElement && document.activeElement.closest("#names")) return;
    names = now;
    const form = $("#names");
    form.replaceChildren(...s.players.map((p, i) => {
      const label = document.createElement("label");
      label.textContent = "Player " + (i + 1) + " ";
      const input = document.createElement("input");
      input.value = p.name; input.maxLength = 16; input.name = "p" + i; input.dataset.player = String(i);
      input.addEventListener("change", () => send({ cmd: "rename", player: i, name: input.value }));
      label.append(input);
      return label;
    }));
    const game = $("#game");
    if (game.dataset.touched !== "1") game.value = s.game;
  };
  // While the page has no connection (the web process is away) nothing it sends could be
  // shown: the commands are disabled until board.js says it is live again.
  function commands(live) {
    document.querySelectorAll(".remote button, .remote input, .remote select, #names input")
      .forEach((el) => { el.disabled = !live; });
  }
  document.addEventListener("board:connection", (ev) => commands(ev.detail.live));
  commands(window.boardLive === true);
  // board.js may have drawn the first snapshot before this script ran (the two load in
  // parallel; the WebSocket can win): show the names from it now, not at the next change.
  if (window.latestSnapshot) window.onSnapshot(window.latestSnapshot);
  $("#names").addEventListener("submit", (ev) => ev.preventDefault());
  $("#game").addEventListener("change", () => { $("#game").dataset.touched = "1"; });
  $("#switch").addEventListener("submit", (ev) => {
    ev.preventDefault();
    let options;
    try { options = JSON.parse($("#options").value || "{}"); } catch (e) {
      $("#result").textContent = "\u2717 options must be JSON, e.g. {\"cards\": 12}"; return;
    }
    send({ cmd: "switch", game: $("#game").value, options: options });
  });
})();
