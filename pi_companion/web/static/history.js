// /history: follows the box (a game appears at its game over: the page fetches the list again
// when a snapshot says the game went over or back) and, on the host's phone (the host token in
// this tab's sessionStorage, put there by /host), removes a game: "Remove", then "Tap again to
// remove" within 4 s. The box keeps a removed game in its removed/ folder.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const token = () => { try { return sessionStorage.getItem("hostToken") || ""; } catch (e) { return ""; } };
  const say = (s) => { const el = $("#removal"); if (el) el.textContent = s; };

  function arm() {
    if (!token()) return;
    document.querySelectorAll("#games button.remove").forEach((b) => {
      b.hidden = false;
      b.addEventListener("click", () => remove(b));
    });
  }

  async function remove(button) {
    const row = button.closest("tr");
    if (button.dataset.armed !== "1") {
      button.dataset.armed = "1";
      button.textContent = "Tap again to remove";
      setTimeout(() => { if (button.isConnected) { button.dataset.armed = ""; button.textContent = "Remove"; } }, 4000);
      return;
    }
    button.disabled = true;
    try {
      const r = await fetch("/api/command", {
        method: "POST", headers: { "Content-Type": "application/json", "X-Host-Token": token() },
        body: JSON.stringify({ cmd: "forget", game: row.dataset.file }), cache: "no-store", credentials: "omit",
      });
      const body = await r.json();
      say(body.ok ? "\u2713 removed" : "\u2717 " + body.error);
    } catch (e) {
      say("\u2717 no answer from the box");
    }
    await refresh();
  }

  async function refresh() {
    try {
      const r = await fetch("/history", { cache: "no-store" });
      const page = new DOMParser().parseFromString(await r.text(), "text/html");
      const fresh = page.querySelector("#history-body");
      if (fresh) { $("#history-body").replaceWith(document.adoptNode(fresh)); arm(); }
      document.body.dataset.refreshed = String(Date.now());
    } catch (e) { /* the next change tries again */ }
  }

  let over = null, delay = 500;
  function follow() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.onmessage = (ev) => {
      let s;
      try { s = JSON.parse(ev.data); } catch (e) { return; }
      if (s.type !== "snapshot") return;
      const now = s.game + ":" + !!s.over;
      if (over !== null && now !== over) refresh();
      over = now;
    };
    ws.onopen = () => { delay = 500; };
    ws.onclose = () => { setTimeout(follow, delay); delay = Math.min(delay * 2, 5000); };
  }
  arm();
  follow();
})();
