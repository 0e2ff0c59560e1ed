// The review page: shows each page with its numbered panels and text boxes, the script's lines beside it, and
// sends plays, saves and renders to the local review server (every request carries the page's token).
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const status = $("status"), player = $("player");
  let book = null, lines = [], voices = {}, dirty = false, selected = -1;
  // Each page's panels in reading order, as editable objects ({bbox, was}: was = the index it was read at, null
  // for a panel added here); a line points at its panel object, so reordering panels carries its lines along.
  let panels = {}, panelsEdited = new Set();

  function say(message, isError) {
    status.textContent = message;
    status.classList.toggle("error", !!isError);
  }
  function withToken(url) { return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token); }
  async function call(path, body) {
    const answer = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { "X-Review-Token": token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await answer.json().catch(() => ({ error: answer.status + " " + answer.statusText }));
    if (!answer.ok) throw new Error(data.error || answer.statusText);
    return data;
  }
  function changed() { dirty = true; say("Unsaved changes."); }
  function el(tag, props, ...children) {
    const { dataset, ...rest } = props || {};
    const node = Object.assign(document.createElement(tag), rest);
    Object.assign(node.dataset, dataset || {});
    children.forEach((child) => node.append(child));
    return node;
  }
  const svgNS = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(svgNS, tag);
    Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
    return node;
  }
  function speakers() {
    return Array.from(new Set(["narrator", ...lines.map((l) => l.speaker), ...Object.keys(voices)])).filter(Boolean);
  }
  const voiceOf = (speaker) => voices[speaker] || voices.narrator || (book.bank[0] && book.bank[0].id);
  function voiceSelect(current, label, onChange) {
    const select = el("select", { className: "voice" });
    select.setAttribute("aria-label", label);
    book.bank.forEach((v) => select.append(el("option", { value: v.id, textContent: v.id + " (" + v.gender + ", " + v.age + ")", selected: v.id === current })));
    select.addEventListener("change", () => onChange(select.value));
    return select;
  }

  function drawOverlay(page) {
    const overlay = $("overlay-" + page.page);
    overlay.querySelectorAll(".panel, .panel-number").forEach((node) => node.remove());
    const mark = $("mark-" + page.page);
    panels[page.page].forEach((panel, i) => {
      const b = panel.bbox;
      overlay.insertBefore(svg("rect", { class: "panel", x: b[0], y: b[1], width: b[2], height: b[3] }), mark);
      const label = svg("text", { class: "panel-number", x: b[0] + 8, y: b[1] + 36 });
      label.textContent = String(i + 1);
      overlay.insertBefore(label, mark);
    });
  }

  function panelEditor(page) {
    const list = el("ol", { className: "panel-list" });
    const redraw = () => { panelsEdited.add(page.page); changed(); drawOverlay(page); drawPanelList(); drawLines(); };
    function drawPanelList() {
      list.replaceChildren(...panels[page.page].map((panel, i) => {
        const n = i + 1, where = "page " + (page.page + 1) + " panel " + n;
        const inputs = ["x", "y", "width", "height"].map((name, k) => {
          const input = el("input", { type: "number", className: "panel-" + name, value: String(panel.bbox[k]), min: "0", step: "1" });
          input.setAttribute("aria-label", where + " " + name);
          input.addEventListener("change", () => { panel.bbox[k] = Math.round(Number(input.value)); redraw(); });
          return el("label", {}, name[0], input);
        });
        const step = (to) => {
          const all = panels[page.page];
          if (to < 0 || to >= all.length) return;
          [all[i], all[to]] = [all[to], all[i]];
          redraw();
        };
        const button = (label, cls, action) => {
          const b = el("button", { type: "button", className: cls, textContent: label });
          b.setAttribute("aria-label", label + " (" + where + ")");
          b.addEventListener("click", action);
          return b;
        };
        return el("li", { dataset: { was: panel.was === null ? "" : String(panel.was) } }, ...inputs,
          button("Earlier", "earlier", () => step(i - 1)), button("Later", "later", () => step(i + 1)),
          button("Remove", "remove", () => {
            lines.forEach((line) => { if (line.panelRef === panel) line.panelRef = null; });
            panels[page.page].splice(i, 1);
            redraw();
          }));
      }));
    }
    drawPanelList();
    const add = el("button", { type: "button", className: "add-panel", textContent: "Add a panel" });
    add.addEventListener("click", () => {
      panels[page.page].push({ bbox: [Math.round(page.width / 4), Math.round(page.height / 4), Math.round(page.width / 2), Math.round(page.height / 2)], was: null });
      redraw();
    });
    const details = el("details", { className: "panels" }, el("summary", { textContent: "Fix the panels of page " + (page.page + 1) + " (boxes and reading order)" }), list, add);
    return details;
  }

  function drawPages() {
    const pages = $("pages");
    pages.replaceChildren();
    book.pages.forEach((page) => {
      const figure = el("figure", { id: "page-" + page.page });
      figure.append(el("figcaption", { textContent: "Page " + (page.page + 1) }));
      const box = el("div", { className: "sheet" });
      box.style.position = "relative";
      box.append(el("img", { src: withToken("/files/" + page.image), alt: "Page " + (page.page + 1) }));
      const overlay = svg("svg", { id: "overlay-" + page.page, viewBox: "0 0 " + page.width + " " + page.height, "aria-hidden": "true" });
      page.texts.forEach((t, i) => {
        overlay.append(svg("rect", { class: "text", x: t.bbox[0], y: t.bbox[1], width: t.bbox[2], height: t.bbox[3] }));
        const label = svg("text", { class: "text-number", x: t.bbox[0] + t.bbox[2] - 30, y: t.bbox[1] + 26 });
        label.textContent = "t" + (i + 1);
        overlay.append(label);
      });
      overlay.append(svg("rect", { class: "mark", id: "mark-" + page.page, x: 0, y: 0, width: 0, height: 0, visibility: "hidden" }));
      box.append(overlay);
      figure.append(box, panelEditor(page));
      pages.append(figure);
      drawOverlay(page);
    });
  }

  function mark(index) {
    selected = index;
    document.querySelectorAll("#lines li").forEach((li, i) => li.classList.toggle("selected", i === index));
    document.querySelectorAll("svg .mark").forEach((m) => m.setAttribute("visibility", "hidden"));
    const line = lines[index];
    if (!line) return;
    const b = line.bbox || (line.panelRef ? line.panelRef.bbox : null);
    const target = $("mark-" + line.page);
    if (!b || !target) return;
    ["x", "y", "width", "height"].forEach((k, i) => target.setAttribute(k, b[i]));
    target.setAttribute("visibility", "visible");
  }

  function drawCast() {
    const body = document.querySelector("#cast tbody");
    body.replaceChildren();
    $("speakers").replaceChildren(...speakers().map((s) => el("option", { value: s })));
    speakers().forEach((speaker) => {
      const select = voiceSelect(voiceOf(speaker), "Voice of " + speaker, (value) => { voices[speaker] = value; changed(); drawLines(); });
      const preview = el("button", { type: "button", className: "preview", textContent: "Preview" });
      preview.setAttribute("aria-label", "Preview the voice of " + speaker);
      preview.addEventListener("click", () => play({ id: "", page: 0, panel: -1, speaker: speaker, kind: "speech",
        text: book.lang === "ja" ? "こんにちは、これが私の声です。" : "Hello! This is how I sound.", emotion: "neutral" }, select.value, preview));
      body.append(el("tr", { dataset: { speaker: speaker } }, el("th", { scope: "row", textContent: speaker }), el("td", {}, select), el("td", {}, preview)));
    });
  }

  function drawLines() {
    const list = $("lines");
    list.replaceChildren();
    lines.forEach((line, index) => {
      const n = index + 1;
      const own = panels[line.page] || [];
      const panel = el("select", { className: "panel" });
      panel.setAttribute("aria-label", "Line " + n + " panel");
      panel.append(el("option", { value: "-1", textContent: "whole page", selected: !line.panelRef }));
      own.forEach((p, i) => panel.append(el("option", { value: String(i), textContent: "panel " + (i + 1), selected: line.panelRef === p })));
      panel.addEventListener("change", () => { line.panelRef = own[Number(panel.value)] || null; line.bbox = null; changed(); mark(index); });
      const speaker = el("input", { className: "speaker", value: line.speaker, size: 10 });
      speaker.setAttribute("list", "speakers");
      speaker.setAttribute("aria-label", "Line " + n + " speaker");
      speaker.addEventListener("change", () => { line.speaker = speaker.value.trim(); changed(); drawCast(); drawLines(); });
      const voice = voiceSelect(voiceOf(line.speaker), "Line " + n + " voice (the speaker's, for all their lines)",
        (value) => { voices[line.speaker] = value; changed(); drawCast(); drawLines(); });
      const kind = el("select", { className: "kind" });
      kind.setAttribute("aria-label", "Line " + n + " kind");
      book.kinds.forEach((k) => kind.append(el("option", { value: k, textContent: k, selected: k === line.kind })));
      kind.addEventListener("change", () => { line.kind = kind.value; changed(); });
      const emotion = el("select", { className: "emotion" });
      emotion.setAttribute("aria-label", "Line " + n + " emotion");
      book.emotions.forEach((e) => emotion.append(el("option", { value: e, textContent: e, selected: e === line.emotion })));
      emotion.addEventListener("change", () => { line.emotion = emotion.value; changed(); });
      const text = el("textarea", { className: "text", value: line.text });
      text.setAttribute("aria-label", "Line " + n + " text");
      text.addEventListener("input", () => { line.text = text.value; changed(); });
      const button = (label, cls, action) => {
        const b = el("button", { type: "button", className: cls, textContent: label });
        b.setAttribute("aria-label", label + " (line " + n + ")");
        b.addEventListener("click", action);
        return b;
      };
      const move = (to) => { if (to < 0 || to >= lines.length) return; const [it] = lines.splice(index, 1); lines.splice(to, 0, it); changed(); drawLines(); mark(to); };
      const playButton = button("Play", "play", () => play(line, voiceOf(line.speaker), playButton));
      const item = el("li", { dataset: { id: line.id } },
        el("div", { className: "fields" },
          el("span", { textContent: "p" + (line.page + 1) + (line.id ? " · " + line.id : " · new") }),
          panel, kind, el("label", {}, "speaker", speaker), voice, emotion),
        text,
        el("div", { className: "buttons" }, playButton, button("Up", "up", () => move(index - 1)), button("Down", "down", () => move(index + 1)),
          button("Delete", "delete", () => { lines.splice(index, 1); changed(); drawLines(); mark(-1); }),
          button("Add after", "add", () => { lines.splice(index + 1, 0, blank(line)); changed(); drawLines(); mark(index + 1); })));
      item.addEventListener("focusin", () => { if (selected !== index) mark(index); });
      list.append(item);
    });
    mark(selected);
  }

  function blank(after) {
    return { id: "", page: after ? after.page : 0, panelRef: after ? after.panelRef : null, speaker: "narrator", kind: "caption", text: "", emotion: "neutral", pause_after_s: 0.5, bbox: null };
  }
  // A line as the server takes it: its panel as an index into its page's panels in their current order.
  function plain(line) {
    const { bbox, panelRef, ...rest } = line;
    return { ...rest, panel: panelRef ? (panels[line.page] || []).indexOf(panelRef) : -1 };
  }

  async function play(line, voice, button) {
    const label = button.textContent;
    button.textContent = "…";
    button.disabled = true;
    try {
      const answer = await call("/api/clip", { line: line.panelRef === undefined ? line : plain(line), voice: voice });
      player.src = withToken(answer.url);
      await player.play();
      say("Playing " + (line.id || "a preview") + " in " + voice + ".");
    } catch (error) {
      say(error.message, true);
    } finally {
      button.textContent = label;
      button.disabled = false;
    }
  }

  async function save() {
    const edited = {};
    panelsEdited.forEach((page) => { edited[page] = panels[page].map((p) => ({ bbox: p.bbox, was: p.was })); });
    const answer = await call("/api/save", { lines: lines.map(plain), voices: voices, panels: edited });
    await load();  // what was saved, as the next run will take it (lines in the order they are said)
    return answer.message;
  }

  $("save").addEventListener("click", async () => {
    try { const message = await save(); say(message); } catch (error) { say(error.message, true); }
  });
  $("render").addEventListener("click", async () => {
    const buttons = [$("save"), $("render")];
    buttons.forEach((b) => { b.disabled = true; });
    try {
      say((await save()) + " Rendering…");
      const answer = await call("/api/render", {});
      await load();
      say(answer.message);
    } catch (error) {
      say(error.message, true);
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  });
  $("add-line").addEventListener("click", () => { lines.push(blank(lines[lines.length - 1])); changed(); drawLines(); mark(lines.length - 1); });
  window.addEventListener("beforeunload", (event) => { if (dirty) event.preventDefault(); });

  async function load() {
    book = await call("/api/book");
    if (book.lang === "ja" && ![...document.fonts].some((f) => f.family === "Narrator Sans JP")) {
      // The project's font (OFL) for kana and kanji, for machines without a Japanese system font.
      document.fonts.add(new FontFace("Narrator Sans JP", "url(" + withToken("/static/NarratorSansJP-Bold.ttf") + ")",
        { unicodeRange: "U+3000-30FF, U+3400-4DBF, U+4E00-9FFF, U+FF00-FFEF" }));
    }
    panels = {};
    panelsEdited = new Set();
    book.pages.forEach((page) => { panels[page.page] = page.panels.map((bbox, i) => ({ bbox: [...bbox], was: i })); });
    lines = book.lines.map((l) => {
      const { panel, ...rest } = l.line;
      return { ...rest, bbox: l.bbox, panelRef: panel >= 0 ? (panels[l.line.page] || [])[panel] || null : null };
    });
    voices = { ...book.voices };
    document.title = book.title + " · review";
    $("title").textContent = "Review: " + book.title;
    $("render").hidden = !book.can_render;
    drawPages();
    drawCast();
    drawLines();
    dirty = false;
    say(lines.length + " line(s) on " + book.pages.length + " page(s). Edit, play, then save.");
  }
  window.review = { loaded: () => book !== null, dirty: () => dirty };
  load().catch((error) => say(error.message, true));
})();
