// The review page: shows each page with its numbered panels and text boxes, the script's lines beside it, and
// sends plays, saves and renders to the local review server (every request carries the page's token).
"use strict";
(function () {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const status = $("status"), player = $("player");
  let book = null, lines = [], voices = {}, dirty = false, selected = -1;

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

  function drawPages() {
    const pages = $("pages");
    pages.replaceChildren();
    book.pages.forEach((page) => {
      const figure = el("figure", { id: "page-" + page.page });
      figure.append(el("figcaption", { textContent: "Page " + (page.page + 1) }));
      const box = el("div", { className: "sheet" });
      box.style.position = "relative";
      box.append(el("img", { src: withToken("/files/" + page.image), alt: "Page " + (page.page + 1) }));
      const overlay = svg("svg", { viewBox: "0 0 " + page.width + " " + page.height, "aria-hidden": "true" });
      page.panels.forEach((b, i) => {
        overlay.append(svg("rect", { class: "panel", x: b[0], y: b[1], width: b[2], height: b[3] }));
        const label = svg("text", { class: "panel-number", x: b[0] + 8, y: b[1] + 36 });
        label.textContent = String(i + 1);
        overlay.append(label);
      });
      page.texts.forEach((t, i) => {
        overlay.append(svg("rect", { class: "text", x: t.bbox[0], y: t.bbox[1], width: t.bbox[2], height: t.bbox[3] }));
        const label = svg("text", { class: "text-number", x: t.bbox[0] + t.bbox[2] - 30, y: t.bbox[1] + 26 });
        label.textContent = "t" + (i + 1);
        overlay.append(label);
      });
      overlay.append(svg("rect", { class: "mark", id: "mark-" + page.page, x: 0, y: 0, width: 0, height: 0, visibility: "hidden" }));
      box.append(overlay);
      figure.append(box);
      pages.append(figure);
    });
  }

  function mark(index) {
    selected = index;
    document.querySelectorAll("#lines li").forEach((li, i) => li.classList.toggle("selected", i === index));
    document.querySelectorAll("svg .mark").forEach((m) => m.setAttribute("visibility", "hidden"));
    const line = lines[index];
    if (!line) return;
    const page = book.pages.find((p) => p.page === line.page);
    const b = line.bbox || (line.panel >= 0 && page ? page.panels[line.panel] : null);
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
      const page = book.pages.find((p) => p.page === line.page);
      const panel = el("select", { className: "panel" });
      panel.setAttribute("aria-label", "Line " + n + " panel");
      panel.append(el("option", { value: "-1", textContent: "whole page", selected: line.panel === -1 }));
      (page ? page.panels : []).forEach((_, i) => panel.append(el("option", { value: String(i), textContent: "panel " + (i + 1), selected: line.panel === i })));
      panel.addEventListener("change", () => { line.panel = Number(panel.value); line.bbox = null; changed(); mark(index); });
      const speaker = el("input", { className: "speaker", value: line.speaker, size: 10 });
      speaker.setAttribute("list", "speakers");
      speaker.setAttribute("aria-label", "Line " + n + " speaker");
      speaker.addEventListener("change", () => { line.speaker = speaker.value.trim(); changed(); drawCast(); drawLines(); });
      const voice = voiceSelect(voiceOf(line.speaker), "Line " + n + " voice (the speaker's, for all their lines)",
        (value) => { voices[line.speaker] = value; changed(); drawCast(); drawLines(); });
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
          el("span", { textContent: "p" + (line.page + 1) + " · " + line.kind + (line.id ? " · " + line.id : " · new") }),
          panel, el("label", {}, "speaker", speaker), voice, emotion),
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
    return { id: "", page: after ? after.page : 0, panel: after ? after.panel : -1, speaker: "narrator", kind: "caption", text: "", emotion: "neutral", pause_after_s: 0.5, bbox: null };
  }

  async function play(line, voice, button) {
    const label = button.textContent;
    button.textContent = "…";
    button.disabled = true;
    try {
      const { bbox, ...plain } = line;
      const answer = await call("/api/clip", { line: plain, voice: voice });
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
    const body = { lines: lines.map(({ bbox, ...plain }) => plain), voices: voices };
    const answer = await call("/api/save", body);
    dirty = false;
    return answer.message;
  }

  $("save").addEventListener("click", async () => {
    try { say(await save()); } catch (error) { say(error.message, true); }
  });
  $("render").addEventListener("click", async () => {
    const buttons = [$("save"), $("render")];
    buttons.forEach((b) => { b.disabled = true; });
    try {
      say((await save()) + " Rendering…");
      const answer = await call("/api/render", {});
      say(answer.message);
      await load();
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
    lines = book.lines.map((l) => ({ ...l.line, bbox: l.bbox }));
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
