// The evening: its standings so far and, once the host ends it, its podium (/api/evening, made
// from the finished games in history/ by web/evening.py). On the scoreboard they take the
// moment's place between games: while the game on the table is over (the standings), or once
// the box says the evening ended (the podium); board.js hands each snapshot to
// window.onEvening. On /evening (body.evening-page) they are always shown.
(function () {
  "use strict";
  const page = document.body.classList.contains("evening-page");
  let section = document.getElementById("evening");
  if (!section) {
    const board = document.getElementById("board");
    if (!board) return;
    section = document.createElement("section");
    section.id = "evening";
    section.className = "evening";
    section.hidden = true;
    section.setAttribute("aria-label", "Tonight");
    board.prepend(section);
  }
  const MEDAL = ["1st", "2nd", "3rd"];     // words on a gold, silver, bronze disc (no emoji font needed)
  const POLL_MS = 2000;          // a finished game reaches history/ just after its game over
  let mode = page ? "page" : "", timer = null, last = "";

  function el(tag, cls, words) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (words !== undefined) e.textContent = words;
    return e;
  }

  function perGame(row) {
    return Object.entries(row.per_game).map(([game, g]) => game + ": won " + g.wins + " of " + g.played).join(" \u00b7 ");
  }

  function table(ev) {
    const t = el("table", "standings");
    const head = el("tr");
    for (const h of ["", "Player", "Wins", "2nd", "3rd", "Games"]) head.append(el("th", "", h));
    t.append(head);
    for (const r of ev.rows) {
      const tr = el("tr");
      tr.dataset.rank = String(r.rank);
      const who = el("td", "who");
      who.append(el("span", "name", r.name), el("span", "games", perGame(r)));
      const medal = r.rank <= 3 && r.wins + r.places[1] + r.places[2] > 0;
      const rank = el("td", "rank");
      rank.append(el("span", medal ? "medal medal-" + r.rank : "", String(r.rank)));
      tr.append(rank,
                who, el("td", "num wins", String(r.wins)), el("td", "num", String(r.places[1])),
                el("td", "num", String(r.places[2])), el("td", "num", String(r.played)));
      t.append(tr);
    }
    return t;
  }

  function podium(ev) {
    const steps = el("ol", "podium");
    for (const place of [2, 1, 3]) {               // silver, gold, bronze: the winner in the middle
      const li = el("li", "step step-" + place);
      const names = ev.podium.filter((r) => r.rank === place);
      li.append(el("span", "medal medal-" + place, MEDAL[place - 1]));
      li.append(el("span", "names", names.map((r) => r.name).join(" & ") || "\u2013"));
      li.append(el("span", "record", names.length ? names[0].wins + (names[0].wins === 1 ? " win" : " wins") : ""));
      li.hidden = !names.length && place !== 1;
      steps.append(li);
    }
    return steps;
  }

  function count(n) { return n + (n === 1 ? " game" : " games"); }

  function draw(view) {
    // On the board, standings from the second game on: after one game the winners' moment says it all.
    const tonight = view.open && view.open.games >= (page ? 1 : 2) ? view.open : null;
    const ended = view.last && view.last.games ? view.last : null;
    // The podium when the evening has just ended (or on /evening, when tonight has no game yet).
    const showPodium = mode === "podium" ? !!ended : mode === "page" ? !tonight && !!ended : false;
    const ev = showPodium ? ended : tonight;
    const key = JSON.stringify([showPodium, ev]);
    if (key === last) return;
    last = key;
    const none = document.getElementById("evening-none");
    if (none) none.hidden = !!ev;
    if (!ev || (mode === "" && !page)) { hide(); return; }
    const title = showPodium ? "Evening " + ev.n + ": the podium" : "Tonight: " + count(ev.games);
    section.replaceChildren(el("h2", "evening-title", title));
    section.dataset.view = showPodium ? "podium" : "standings";
    if (showPodium) section.append(podium(ev), el("p", "evening-small", count(ev.games) + " played"));
    section.append(table(ev));
    section.hidden = false;
    document.body.classList.add("evening-on");
  }

  function hide() {
    section.hidden = true;
    section.dataset.view = "";
    document.body.classList.remove("evening-on");
  }

  async function fetchView() {
    try {
      const r = await fetch("/api/evening", { cache: "no-store" });
      if (r.ok) draw(await r.json());
    } catch (e) { /* the web process is away: keep what is shown, try again */ }
  }

  function poll(on) {
    if (on && !timer) { fetchView(); timer = setInterval(fetchView, POLL_MS); }
    if (!on && timer) { clearInterval(timer); timer = null; }
  }

  window.onEvening = function (s) {
    const was = mode;
    mode = /^Evening ended/.test(s.notice || "") ? "podium" : s.over ? "standings" : "";
    if (mode !== was) { last = ""; if (!mode) hide(); }
    poll(!!mode);
    if (mode && mode !== was) fetchView();
  };
  if (page) poll(true);
  else if (window.latestSnapshot) window.onEvening(window.latestSnapshot);
})();
