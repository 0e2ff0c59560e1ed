// The read-along player: reads the guided navigation (window.READ_ALONG, from guided.js so it loads from disk
// as well as over HTTP), follows the narration's clock, shows the page being read, outlines its panel and the
// balloon being spoken, and puts the line in a live caption. No network, no libraries.
"use strict";
(function () {
  const data = window.READ_ALONG;
  const $ = (id) => document.getElementById(id);
  const audio = $("narration"), figure = $("page"), image = $("page-image");
  const panelBox = $("panel-box"), balloonBox = $("balloon-box");
  const caption = $("caption"), transcript = $("transcript"), position = $("position"), play = $("play");

  function fragment(ref, name) {
    if (!ref || ref.indexOf("#") < 0) return null;
    const value = new URLSearchParams(ref.slice(ref.indexOf("#") + 1)).get(name);
    return value === null ? null : value.split(",").map(Number);
  }
  const span = (ref) => { const t = fragment(ref, "t"); return t && t.length === 2 ? t : null; };
  const rect = (ref) => { const r = fragment(ref, "xywh"); return r && r.length === 4 ? r : null; };

  // Pages, each with its panels and lines (page-wide lines first, then panel by panel in reading order).
  const pages = data.guided.guided.map((page, index) => {
    const lines = [], panels = [];
    function visit(node, panel) {
      const roles = node.role || [];
      if (roles.includes("panel")) {
        const entry = { id: node.id, rect: rect(node.imgref), span: span(node.audioref) };
        panels.push(entry);
        (node.children || []).forEach((child) => visit(child, entry));
        return;
      }
      if (node.text !== undefined) {
        lines.push({ id: node.id, rect: rect(node.imgref), span: span(node.audioref), text: node.text,
                     who: (node.character || []).join(", "), panel: panel, page: index });
      }
      (node.children || []).forEach((child) => visit(child, panel));
    }
    (page.children || []).forEach((child) => visit(child, null));
    return { index: index, image: page.imgref.split("#")[0], span: span(page.audioref), lines: lines, panels: panels };
  });
  const timed = pages.flatMap((p) => p.lines.filter((l) => l.span)).sort((a, b) => a.span[0] - b.span[0]);
  const inside = (s, t) => s && s[0] <= t && t < s[1];
  // The local reader's ids are not names (the subtitles do not show them either); an LLM reader's names are.
  const named = (who) => (who && !/^(char\d+|unknown|narrator)$/i.test(who) ? who + ": " : "");

  let shown = -1, chosenPage = 0, lastCaption = null;

  function pageAt(t) {
    const hit = pages.find((p) => inside(p.span, t));
    if (hit) return hit.index;
    const started = pages.filter((p) => p.span && p.span[0] <= t);
    return started.length && !audio.paused ? started[started.length - 1].index : chosenPage;
  }

  function place(box, r) {
    if (!r || !image.naturalWidth) { box.hidden = true; return; }
    const w = image.naturalWidth, h = image.naturalHeight;
    box.style.left = (100 * r[0] / w) + "%"; box.style.top = (100 * r[1] / h) + "%";
    box.style.width = (100 * r[2] / w) + "%"; box.style.height = (100 * r[3] / h) + "%";
    box.hidden = false;
  }

  function showPage(index) {
    if (index === shown) return;
    shown = index;
    const page = pages[index];
    figure.dataset.page = String(index);
    image.src = page.image;
    image.alt = "Page " + (index + 1) + " of " + pages.length;
    transcript.replaceChildren(...page.lines.map((line) => {
      const item = document.createElement("li"), button = document.createElement("button");
      button.type = "button"; button.dataset.line = line.id;
      button.textContent = named(line.who) + line.text;
      button.addEventListener("click", () => seekLine(line));
      item.append(button);
      return item;
    }));
  }

  function render() {
    const t = audio.currentTime;
    const index = pageAt(t);
    showPage(index);
    const page = pages[index];
    const line = page.lines.find((l) => inside(l.span, t)) || null;
    const panel = page.panels.find((p) => inside(p.span, t)) || null;
    place(panelBox, panel && panel.rect);
    panelBox.dataset.panel = panel ? panel.id : "";
    place(balloonBox, line && (line.rect || (line.panel && line.panel.rect)));
    balloonBox.dataset.line = line ? line.id : "";
    const text = line ? named(line.who) + line.text : "";
    if (text !== lastCaption) { caption.textContent = text; lastCaption = text; }
    transcript.querySelectorAll("button").forEach((b) => b.setAttribute("aria-current", String(!!line && b.dataset.line === line.id)));
    const number = line ? timed.indexOf(line) + 1 : 0;
    position.textContent = "Page " + (index + 1) + " of " + pages.length + (number ? " · line " + number + " of " + timed.length : "");
    play.textContent = audio.paused ? "Play" : "Pause";
  }

  function seek(t) { audio.currentTime = Math.max(0, t); render(); }
  function seekLine(line) { chosenPage = line.page; seek(line.span ? line.span[0] + 0.001 : audio.currentTime); }
  function stepLine(direction) {
    const t = audio.currentTime;
    if (direction > 0) { const next = timed.find((l) => l.span[0] > t + 0.05); if (next) seekLine(next); return; }
    const started = timed.filter((l) => l.span[0] <= t + 0.01);
    if (!started.length) return;
    let i = started.length - 1;
    if (t - started[i].span[0] < 1.0 && i > 0) i -= 1;
    seekLine(started[i]);
  }
  function stepPage(direction) {
    const target = Math.min(pages.length - 1, Math.max(0, pageAt(audio.currentTime) + direction));
    chosenPage = target;
    if (pages[target].span) seek(pages[target].span[0] + 0.001); else render();
  }
  function toggle() { if (audio.paused) { audio.play().catch(() => {}); } else { audio.pause(); } }

  $("prev-page").addEventListener("click", () => stepPage(-1));
  $("next-page").addEventListener("click", () => stepPage(1));
  $("prev-line").addEventListener("click", () => stepLine(-1));
  $("next-line").addEventListener("click", () => stepLine(1));
  play.addEventListener("click", toggle);
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = { " ": toggle, k: toggle, ArrowRight: () => stepLine(1), ArrowLeft: () => stepLine(-1),
                   PageDown: () => stepPage(1), PageUp: () => stepPage(-1), Home: () => seek(0) };
    const action = keys[event.key];
    if (!action || (event.target === audio && event.key !== "PageDown" && event.key !== "PageUp")) return;
    event.preventDefault();
    action();
  });
  ["timeupdate", "seeked", "play", "pause", "ended"].forEach((name) => audio.addEventListener(name, render));
  image.addEventListener("load", render);
  // A static server without byte ranges (Python's http.server, some CDNs) leaves the audio unseekable: then the
  // narration is fetched whole once and played from memory, so every control still works.
  let seekable = false;
  audio.addEventListener("loadedmetadata", () => {
    const whole = audio.seekable.length > 0 && audio.seekable.end(0) >= audio.duration - 0.5;
    if (whole || !location.protocol.startsWith("http") || audio.src.startsWith("blob:")) { seekable = true; return; }
    fetch(audio.currentSrc).then((answer) => answer.blob()).then((blob) => {
      const at = audio.currentTime, playing = !audio.paused;
      audio.src = URL.createObjectURL(blob);
      audio.addEventListener("loadedmetadata", () => {
        audio.currentTime = at; if (playing) audio.play().catch(() => {});
      }, { once: true });
    });
  });
  (function tick() { if (!audio.paused) render(); requestAnimationFrame(tick); })();
  window.readAlong = {
    pages: pages.length,
    ready: () => seekable,
    state: () => ({ time: audio.currentTime, paused: audio.paused, page: shown,
                    line: balloonBox.dataset.line || null, panel: panelBox.dataset.panel || null,
                    caption: caption.textContent }),
  };
  render();
})();
