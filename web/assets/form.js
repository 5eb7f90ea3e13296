/* global Entryd, Outbox, Offline, Duplicates, uuidv7 */
// The form page: built from io.entryd.Forms.GetForm, so a new form file needs
// no code. It follows the terminal form's rules (entryctl add -i,
// Sources/EntryClient/Interactive): fields in form order; Enter opens a
// picker and commits its highlighted row, Enter in a text field moves on,
// Tab / Shift-Tab move, only Done (or Ctrl-Enter) submits; an empty picker
// opens on its first row (today for dates) without committing it; Escape
// restores the earlier value; committing a province empties its city; a field
// whose required-when condition does not hold is hidden. The daemon's Check
// finds the problems, its Options searches the rows; offline (entryd-web
// unreachable), the form and the rows come from Offline (offline.js), which
// ranks them as Options does.
"use strict";

(() => {
  const E = Entryd, h = E.h;
  const params = new URLSearchParams(location.search);
  const FORM = params.get("form") || null;
  const KIOSK = params.get("kiosk") === "1";
  // ?edit=ID: a stored entry in this form, driven by edit.js (EntrydEdit); Done updates it
  const editor = params.get("edit") && window.EntrydEdit ? window.EntrydEdit : null;
  const IDLE_MS = Math.max(1, Number(params.get("idle")) || 60) * 1000;
  const RETRY_MS = 10000;
  const CHECK_DELAY = 300, SEARCH_DELAY = 120, PAGE = 8;
  // no answer within these (ms) counts as offline: the page's own data and checks take over;
  // an Add given up on is kept in the outbox and sent again with its id (stored once)
  const QUICK = 5000, ADD_WAIT = 15000;
  // after no answer at all, the page holds itself offline this long (ms): no
  // field waits for the network again until then (the outbox still tries)
  const OFFLINE_HOLD = 30000;
  let offlineUntil = 0;
  const knownOffline = () => Date.now() < offlineUntil;
  function noted(err) {
    if (err && err.status === 0) {
      const was = knownOffline();
      offlineUntil = Date.now() + OFFLINE_HOLD;
      if (!was) updateQueue();
      setTimeout(() => { if (!knownOffline()) updateQueue(); }, OFFLINE_HOLD + 50);
    }
    return err;
  }
  function online() {
    if (!offlineUntil) return;
    offlineUntil = 0;
    updateQueue();
  }

  /** GetForm, Options, Check: given up on after QUICK, and not tried while the page holds itself offline. */
  async function quick(method, params, opts) {
    if (knownOffline()) throw new E.ApiError(0, "", {});
    try {
      const r = await E.call(method, params, { ...opts, timeout: QUICK });
      online();
      return r;
    } catch (err) {
      throw noted(err);
    }
  }

  const W = {
    zh: {
      prev: "上一项", next: "下一项", done: "完成", cancel: "取消", ok: "确定", nav: "表单导航",
      empty: "（未填）", search: "输入名称、代码或拼音搜索", loading: "正在加载…", noRows: "没有匹配的选项",
      offlineRows: "离线：无法加载选项", datePh: "yyyy-MM-dd", dateTimePh: "yyyy-MM-dd HH:mm",
      cols: ["年", "月", "日", "时", "分"], didYouMean: "是否是：",
      submitting: "正在提交…", stored: "已保存。", thanks: "谢谢，已提交。",
      fix: "请修正标出的问题后再提交。", fixOffline: "网络不通：请先修正标出的问题，之后才能存放在本机。", queued: "网络不通：已存放在本机，联网后自动发送。",
      waiting: (n) => `${n} 份提交等待发送`, otherUser: (n) => `${n} 份提交等待另一位用户登录后发送`,
      notLoggedIn: "未登录：这份提交无法保存在本机。联网后请先登录再提交（填写的内容仍在页面上）。",
      rejectedQueued: (n) => `${n} 份离线提交被拒绝，请工作人员处理`,
      offlineNote: "离线：表单和选项来自本机，提交将存放在本机，联网后发送。",
      loginToSend: "请登录后发送等待中的提交。", fixing: "这是一份被服务器拒绝的离线提交：请修正后提交。",
      retry: "立即重试", reloaded: "一份离线保存的提交被服务器拒绝，请修正后再提交。",
      keys: [[["Enter"], "打开选择 / 下一项"], [["Tab", "Shift+Tab"], "移动"], [["Esc"], "取消选择"], [["Ctrl+Enter"], "提交"]],
      keySep: "：", keyOr: "、", pick: (l) => `打开日期选择：${l}`,
      formMissing: "找不到这个表单。", idleReset: "长时间无操作，表单已清空。",
    },
    en: {
      prev: "Previous", next: "Next", done: "Done", cancel: "Cancel", ok: "OK", nav: "Form navigation",
      empty: "(empty)", search: "Type a name, code or pinyin to search", loading: "Loading…", noRows: "No matching options",
      offlineRows: "Offline: the options cannot be loaded", datePh: "yyyy-MM-dd", dateTimePh: "yyyy-MM-dd HH:mm",
      cols: ["Year", "Month", "Day", "Hour", "Minute"], didYouMean: "Did you mean: ",
      submitting: "Submitting…", stored: "Stored.", thanks: "Thank you, submitted.",
      fix: "Please fix the marked problems, then submit again.",
      fixOffline: "No network: please fix the marked problems first; then the entry can be kept on this device.", queued: "No network: kept on this device; it is sent when the network is back.",
      waiting: (n) => `${n} submission${n === 1 ? "" : "s"} waiting to be sent`,
      otherUser: (n) => `${n} submission${n === 1 ? "" : "s"} waiting for another user to log in`,
      notLoggedIn: "Not logged in: this submission cannot be kept on this device. Log in once the network is back, then submit (the values stay here).",
      rejectedQueued: (n) => `${n} offline submission${n === 1 ? " was" : "s were"} refused; staff must handle ${n === 1 ? "it" : "them"}`,
      offlineNote: "No network: the form and its options come from this device; submissions are kept here and sent when the network is back.",
      loginToSend: "Log in to send the waiting submissions.",
      fixing: "A submission kept offline that the server refused: fix it, then submit.",
      retry: "Retry now", reloaded: "A submission kept offline was refused by the server; please fix it and submit again.",
      keys: [[["Enter"], "open a picker / next field"], [["Tab", "Shift+Tab"], "move"], [["Esc"], "cancel a picker"], [["Ctrl+Enter"], "submit"]],
      keySep: ": ", keyOr: ", ", pick: (l) => `Choose a date: ${l}`,
      formMissing: "This form does not exist.", idleReset: "The form was cleared after a pause.",
    },
  };
  const w = () => W[E.lang];

  // ---- state (the terminal FormEditor's, in the page) ----
  let form = null;
  let values = {}, display = {}, problems = [];
  let touched = new Set(), learned = new Set(), submitAttempted = false;
  let draftId = uuidv7();
  let current = 0;               // index in form.fields of the field that has (or last had) the focus
  let picker = null;             // the open picker: {kind: "list"|"date", field, ...}
  let els = {};                  // per field: {row, label, input, control, problem, popup, list}
  const optionCache = new Map(); // Options replies by request (reference rows only, never entries)
  let checkSeq = 0, checkTimer = 0, searchTimer = 0, submitting = false;

  const $ = (id) => document.getElementById(id);
  const fieldByName = (n) => form.fields.find((f) => f.name === n);
  const isList = (f) => ["country", "province", "city", "choice"].includes(f.type);
  const isDate = (f) => f.type === "date" || f.type === "datetime";
  const cond = (f) => {
    if (!f.requiredWhen) return null;
    const i = f.requiredWhen.indexOf("=");
    return i < 0 ? null : [f.requiredWhen.slice(0, i), f.requiredWhen.slice(i + 1)];
  };
  function isShown(f) {
    if (f.parent) { const p = fieldByName(f.parent); if (p && !isShown(p)) return false; }
    const c = cond(f);
    return !c || (values[c[0]] || "") === c[1];
  }
  function isRequired(f) {
    const c = cond(f);
    return f.required || (c && (values[c[0]] || "") === c[1]) || learned.has(f.name);
  }
  const shownFields = () => form.fields.filter(isShown);
  function checkedValues() {
    const out = {};
    for (const f of form.fields) if (isShown(f) && values[f.name]) out[f.name] = values[f.name];
    return out;
  }
  function shownProblems(f) {
    return problems.filter((p) => p.field === f.name && (p.code !== "required" || submitAttempted || touched.has(f.name)));
  }
  const rowFlag = (f, r) => r.flag || (f.type === "country" ? E.flagOf(r.value) : "");
  const rowShown = (f, r) => { const fl = rowFlag(f, r); return fl ? `${fl} ${r.label}` : r.label; };
  const shownValue = (f) => display[f.name] || values[f.name] || "";
  /** The text a field's input shows: a list's label, a phone number in its
   *  spaced display form (`+86 136 1234 5678`, what Check answers), else the value. */
  const inputText = (f) => isList(f) || f.type === "phone" ? shownValue(f) : values[f.name] || "";

  // ---- building the page from GetForm ----
  // entryd.form.LANG for the default form, entryd.form.LANG.NAME for ?form=NAME
  function cacheKey() { return FORM ? `entryd.form.${E.lang}.${FORM}` : `entryd.form.${E.lang}`; }

  async function loadForm() {
    try {
      const r = await quick("io.entryd.Forms.GetForm", { name: FORM, locale: E.lang });
      form = r.form;
      try {
        localStorage.setItem(cacheKey(), JSON.stringify(form));
        localStorage.removeItem(`entryd.form.${FORM || ""}.${E.lang}`); // the earlier key (entryd.form..en)
      } catch (e) { /* storage off */ }
    } catch (err) {
      let cached = null;
      if (err.transient) { await Offline.load(); cached = Offline.form(FORM, E.lang); }
      try { cached = cached || JSON.parse(localStorage.getItem(cacheKey()) || "null"); } catch (e) { cached = null; }
      if (err.transient && cached) { form = cached; return; }
      if (err.status === 401) throw err;
      setStatus("bad", err.is && err.is("FormNotFound") ? w().formMissing : E.describe(err));
      throw err;
    }
  }

  function build() {
    const box = $("fields");
    els = {};
    box.replaceChildren();
    $("title").textContent = form.title;
    document.title = `${form.title} · entryd`;
    for (const f of form.fields) {
      const id = `in-${f.name}`;
      const e = {};
      e.label = h("label", { for: id, id: `lb-${f.name}` });
      e.problem = h("div", { class: "problem", id: `pr-${f.name}` });
      if (isList(f)) {
        e.list = h("ul", { role: "listbox", id: `ls-${f.name}`, "aria-labelledby": `lb-${f.name}` });
        e.input = h("input", {
          id, type: "text", role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false",
          "aria-controls": `ls-${f.name}`, "aria-haspopup": "listbox", autocomplete: "off", spellcheck: "false",
          "aria-describedby": `pr-${f.name}`, class: f.type === "country" ? "emoji-capable" : null,
        });
        e.popup = h("div", { class: "popup", hidden: true }, e.list, popupActions(f));
      } else if (isDate(f)) {
        e.input = h("input", {
          id, type: "text", role: "combobox", "aria-haspopup": "dialog", "aria-expanded": "false",
          "aria-controls": `dlg-${f.name}`, autocomplete: "off", inputmode: "numeric", spellcheck: "false",
          "aria-describedby": `pr-${f.name}`,
        });
        e.cols = h("div", { class: "cols" });
        e.popup = h("div", { class: "popup wheel", role: "dialog", id: `dlg-${f.name}`, "aria-labelledby": `lb-${f.name}`,
          "aria-describedby": `pr-${f.name}`, hidden: true }, e.cols, popupActions(f));
        // for the pointer: Enter on the field does the same (so it is not a Tab stop of its own)
        e.pick = h("button", { type: "button", class: "pick", id: `pk-${f.name}`, tabindex: "-1", "aria-controls": `dlg-${f.name}`,
          onclick: () => {
            if (picker && picker.field === f) { cancelPicker(); e.input.focus(); return; }
            e.input.focus();
            enterDate(f);
          } }, h("span", { "aria-hidden": "true" }, "\u{1F4C5}"));
      } else {
        const type = f.type === "phone" ? "tel" : f.type === "email" ? "email" : "text";
        const auto = KIOSK ? "off" : f.type === "phone" ? "tel" : f.type === "email" ? "email" : f.name === "name" ? "name" : "off";
        e.input = h("input", { id, type, autocomplete: auto, "aria-describedby": `pr-${f.name}`,
          maxlength: f.maxLength || null, inputmode: f.type === "phone" ? "tel" : f.type === "email" ? "email" : null });
      }
      e.control = h("div", { class: "control" + (isList(f) ? "" : isDate(f) ? " date" : " text") }, e.input, e.pick || null, e.popup || null);
      e.row = h("div", { class: "field", id: `f-${f.name}`, "data-field": f.name }, e.label, e.control, e.problem);
      box.append(e.row);
      els[f.name] = e;
      wire(f, e);
    }
    words();
  }

  function popupActions(f) {
    const keep = (ev) => { if (picker && picker.kind === "list") ev.preventDefault(); };
    return h("div", { class: "popup-actions" },
      h("button", { type: "button", class: "btn", "data-act": "cancel", onmousedown: keep, onclick: () => { cancelPicker(); els[f.name].input.focus(); } }),
      h("button", { type: "button", class: "btn primary", "data-act": "ok", onmousedown: keep, onclick: () => { commitPicker(false); els[f.name].input.focus(); } }));
  }

  function words() {
    $("prev").textContent = w().prev;
    $("next").textContent = w().next;
    $("done").textContent = w().done;
    $("toolbar").setAttribute("aria-label", w().nav);
    // one list item a key, so that the hints are apart on the screen and for screen readers
    $("keys").replaceChildren(...w().keys.map(([ks, what]) => h("li", {},
      ks.map((k, i) => [i ? w().keyOr : "", h("kbd", {}, k)]), w().keySep, what)));
    document.querySelectorAll("[data-act=cancel]").forEach((b) => { b.textContent = w().cancel; });
    document.querySelectorAll("[data-act=ok]").forEach((b) => { b.textContent = w().ok; });
    for (const f of form.fields) {
      const e = els[f.name];
      if (isDate(f)) {
        e.input.placeholder = f.type === "date" ? w().datePh : w().dateTimePh;
        e.pick.setAttribute("aria-label", w().pick(f.label));
      }
    }
  }

  // ---- drawing the state ----
  function render() {
    for (const f of form.fields) {
      const e = els[f.name];
      e.row.hidden = !isShown(f);
      const req = isRequired(f);
      e.label.replaceChildren(f.label, req ? h("span", { class: "req", "aria-hidden": "true" }, "*") : "");
      e.input.setAttribute("aria-required", String(!!req));
      const open = picker && picker.field === f;
      if (!open && document.activeElement !== e.input) e.input.value = inputText(f);
      else if (!open && isList(f)) e.input.value = shownValue(f);
      if (isList(f)) e.input.placeholder = open ? w().search : w().empty;
      const ps = shownProblems(f);
      e.input.setAttribute("aria-invalid", String(ps.length > 0));
      const key = JSON.stringify(ps.map((p) => [p.message, p.suggestions]));
      if (e.problem.dataset.key !== key) { // redrawn only when changed: a suggestion being clicked stays
        e.problem.dataset.key = key;
        e.problem.replaceChildren(...ps.map((p) => h("div", {}, p.message, suggestionButtons(f, p))));
      }
    }
    const shown = shownFields().map((f) => form.fields.indexOf(f));
    $("prev").disabled = !(shown.length && current > shown[0]);
    $("next").disabled = !(shown.length && current < shown[shown.length - 1]);
    $("done").disabled = submitting;
    const general = problems.filter((p) => p.field === "" && submitAttempted);
    if (general.length) setStatus("bad", general.map((p) => p.message).join(" "));
  }

  function suggestionButtons(f, p) {
    if (!p.suggestions || !p.suggestions.length) return null;
    return h("div", {}, w().didYouMean, ...p.suggestions.map((s) => {
      const row = knownRow(f, s);
      const text = row ? rowShown(f, row) : s;
      return h("button", { type: "button", onmousedown: (ev) => ev.preventDefault(), onclick: () => {
        if (isList(f)) commit(f, s, text, row && row.parent);
        else { values[f.name] = s; els[f.name].input.value = s; touched.add(f.name); render(); scheduleCheck(0); }
        els[f.name].input.focus();
      } }, text);
    }));
  }

  function knownRow(f, value) {
    for (const [k, rows] of optionCache) {
      if (!k.startsWith(JSON.stringify([E.lang, FORM, f.name]).slice(0, -1))) continue;
      const r = rows.find((x) => x.value === value);
      if (r) return r;
    }
    return null;
  }

  function setStatus(kind, text) {
    const s = $("status");
    s.className = "status " + kind;
    s.textContent = text || "";
  }

  // ---- focus and navigation ----
  function moveFocus(dir) {
    const shown = shownFields().map((f) => form.fields.indexOf(f));
    let at = shown.indexOf(current);
    if (at < 0) at = dir > 0 ? -1 : shown.length;
    const target = shown[at + dir];
    if (target === undefined) return false;
    els[form.fields[target].name].input.focus();
    return true;
  }

  function focusField(f) {
    current = form.fields.indexOf(f);
    render();
  }

  function leaveField(f) {
    if (!touched.has(f.name)) { touched.add(f.name); render(); }
  }

  // ---- events ----
  function wire(f, e) {
    e.input.addEventListener("focus", () => {
      focusField(f);
      if (isList(f) && !picker) e.input.select();
    });
    e.control.addEventListener("focusout", (ev) => {
      if (e.control.contains(ev.relatedTarget)) return;
      if (picker && picker.field === f) cancelPicker();
      leaveField(f);
      if (!isList(f)) scheduleCheck(0);
    });
    if (isList(f)) {
      e.input.addEventListener("keydown", (ev) => listKey(f, e, ev));
      e.input.addEventListener("input", () => {
        if (!picker || picker.field !== f) openList(f, e.input.value);
        else { picker.query = e.input.value; clearTimeout(searchTimer); searchTimer = setTimeout(fetchRows, SEARCH_DELAY); }
      });
      e.input.addEventListener("click", () => { if (!picker) openList(f, ""); });
      e.list.addEventListener("mousedown", (ev) => ev.preventDefault());
      e.list.addEventListener("click", (ev) => {
        const li = ev.target.closest("[role=option]");
        if (!li || !picker) return;
        picker.hi = Number(li.dataset.i);
        commitPicker(false);
      });
    } else if (isDate(f)) {
      e.input.addEventListener("keydown", (ev) => {
        if (ev.isComposing) return;
        if (ev.key === "Enter" && !ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); enterDate(f); }
        else if (ev.key === "ArrowDown" && ev.altKey) { ev.preventDefault(); enterDate(f); }
      });
      // a click (or a tap) puts the caret in the field for typing; the wheel opens by Enter or the picker button
      e.input.addEventListener("input", () => typed(f, e.input.value));
      e.popup.addEventListener("keydown", (ev) => wheelKey(f, ev));
      e.popup.addEventListener("wheel", (ev) => {
        if (!picker || !picker.wheel) return;
        const col = ev.target.closest("[role=spinbutton]");
        if (!col) return;
        ev.preventDefault();
        picker.wheel.column = Number(col.dataset.col);
        picker.wheel.turn(ev.deltaY > 0 ? 1 : -1);
        picker.onToday = false;
        drawWheel(true);
      }, { passive: false });
    } else {
      e.input.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && !ev.ctrlKey && !ev.metaKey && !ev.isComposing) { ev.preventDefault(); moveFocus(1); }
      });
      e.input.addEventListener("input", () => typed(f, e.input.value));
    }
  }

  function typed(f, text) {
    values[f.name] = text;
    delete display[f.name];
    scheduleCheck(CHECK_DELAY);
  }

  function listKey(f, e, ev) {
    if (ev.isComposing) return;
    const open = picker && picker.field === f;
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") return; // Done: the document's handler
    if (!open) {
      if (ev.key === "Enter" || ev.key === " " || ev.key === "ArrowDown" || ev.key === "ArrowUp") {
        ev.preventDefault();
        openList(f, "");
      } else if ((ev.key === "Backspace" || ev.key === "Delete") && values[f.name]) {
        ev.preventDefault();
        commit(f, "", "");
      } else if (ev.key.length === 1 && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
        openList(f, "", true); // the key itself goes into the emptied search box
      }
      return;
    }
    const p = picker;
    switch (ev.key) {
      case "ArrowDown": ev.preventDefault(); moveHighlight(1); break;
      case "ArrowUp": ev.preventDefault(); moveHighlight(-1); break;
      case "PageDown": ev.preventDefault(); moveHighlight(PAGE); break;
      case "PageUp": ev.preventDefault(); moveHighlight(-PAGE); break;
      case "Home": ev.preventDefault(); if (p.rows.length) setHighlight(0); break;
      case "End": ev.preventDefault(); if (p.rows.length) setHighlight(p.rows.length - 1); break;
      case "Enter": ev.preventDefault(); commitPicker(true); break;
      case "Escape": ev.preventDefault(); ev.stopPropagation(); cancelPicker(); break;
      case "Tab": cancelPicker(); break;
      default: break;
    }
  }

  // ---- list pickers ----
  function openList(f, query, typing) {
    if (picker) cancelPicker();
    const e = els[f.name];
    const parent = f.parent && values[f.parent] ? values[f.parent] : null;
    picker = { kind: "list", field: f, parent, earlier: values[f.name] || "", query: query || "", rows: [], hi: -1, loading: true, error: null };
    if (typing) e.input.value = "";
    else e.input.value = picker.query;
    e.input.placeholder = w().search;
    e.input.setAttribute("aria-expanded", "true");
    e.popup.hidden = false;
    e.popup.scrollIntoView({ block: "nearest" });
    drawList();
    fetchRows();
  }

  function optionsKey(f, parent, query) { return JSON.stringify([E.lang, FORM, f.name, parent || "", query || ""]); }

  async function options(f, parent, query, fresh) {
    const key = optionsKey(f, parent, query);
    if (optionCache.has(key) && !fresh) return optionCache.get(key);
    const limit = query ? 100 : null;
    let rows;
    try {
      rows = (await quick("io.entryd.Forms.Options", {
        form: FORM, field: f.name, parent: parent || null, query: query || null, locale: E.lang, limit,
      }, { redirect: false })).options;
    } catch (err) {
      // offline: the same search over the data the service worker keeps
      if (!err.transient) throw err;
      await Offline.load();
      rows = Offline.search(FORM || (form && form.name), f.name, parent, query, E.lang, limit);
      if (!rows) throw err;
    }
    optionCache.set(key, rows);
    return rows;
  }

  async function fetchRows() {
    const p = picker;
    if (!p || p.kind !== "list") return;
    const query = p.query.trim();
    p.loading = true;
    try {
      const rows = await options(p.field, p.parent, query);
      if (picker !== p || p.query.trim() !== query) return; // an older answer
      p.rows = rows;
      p.loading = false;
      p.error = null;
      const earlier = query ? -1 : rows.findIndex((r) => r.value === p.earlier);
      p.hi = rows.length ? (earlier >= 0 ? earlier : 0) : -1;
    } catch (err) {
      if (picker !== p) return;
      p.loading = false;
      p.rows = [];
      p.hi = -1;
      p.error = err.transient ? w().offlineRows : E.describe(err);
    }
    drawList();
  }

  function drawList() {
    const p = picker, e = els[p.field.name];
    if (p.loading && !p.rows.length) {
      e.list.replaceChildren(h("li", { role: "option", "aria-disabled": "true", "aria-selected": "false", class: "empty", id: `ls-${p.field.name}-none` }, w().loading));
      e.input.removeAttribute("aria-activedescendant");
      return;
    }
    if (!p.rows.length) {
      e.list.replaceChildren(h("li", { role: "option", "aria-disabled": "true", "aria-selected": "false", class: "empty", id: `ls-${p.field.name}-none` }, p.error || w().noRows));
      e.input.removeAttribute("aria-activedescendant");
      return;
    }
    const f = p.field;
    e.list.dataset.query = p.query.trim(); // what the rows answer (tests wait on it)
    e.list.replaceChildren(...p.rows.map((r, i) => {
      const fl = rowFlag(f, r);
      return h("li", {
        role: "option", id: `ls-${f.name}-${i}`, "data-i": i, "data-value": r.value,
        "aria-selected": String(i === p.hi), class: r.value === p.earlier ? "chosen" : null,
      }, fl ? h("span", { class: "emoji", "aria-hidden": "true" }, fl) : null, h("span", {}, r.label),
      f.type !== "choice" ? h("span", { class: "code", "aria-hidden": "true" }, r.value) : null);
    }));
    setHighlight(p.hi);
  }

  function setHighlight(i) {
    const p = picker, e = els[p.field.name];
    const old = e.list.querySelector('[aria-selected="true"]');
    if (old) old.setAttribute("aria-selected", "false");
    p.hi = i;
    const li = i >= 0 ? $(`ls-${p.field.name}-${i}`) : null;
    if (!li) { e.input.removeAttribute("aria-activedescendant"); return; }
    li.setAttribute("aria-selected", "true");
    e.input.setAttribute("aria-activedescendant", li.id);
    li.scrollIntoView({ block: "nearest" });
  }

  function moveHighlight(delta) {
    const p = picker;
    if (!p.rows.length) return;
    setHighlight(Math.min(Math.max(0, (p.hi < 0 ? 0 : p.hi) + delta), p.rows.length - 1));
  }

  /** Closes the open picker, leaving the field as it was (Escape: the earlier value). */
  function cancelPicker() {
    const p = picker;
    if (!p) return;
    picker = null;
    const e = els[p.field.name];
    e.popup.hidden = true;
    e.input.setAttribute("aria-expanded", "false");
    e.input.removeAttribute("aria-activedescendant");
    if (p.kind === "list") e.list.replaceChildren();
    else e.cols.replaceChildren();
    render();
    if (isList(p.field)) e.input.value = shownValue(p.field);
    else e.input.value = values[p.field.name] || "";
  }

  /** Commits the highlighted row or the wheel's value; `moveOn`: then focus the next field (Enter). */
  function commitPicker(moveOn) {
    const p = picker;
    if (!p) return false;
    if (p.kind === "list") {
      if (p.loading || p.hi < 0 || !p.rows[p.hi]) return false;
      const row = p.rows[p.hi];
      cancelPicker();
      commit(p.field, row.value, rowShown(p.field, row), row.parent);
    } else {
      const v = p.wheel.canonical();
      cancelPicker();
      commit(p.field, v, v);
    }
    els[p.field.name].input.focus();
    if (moveOn) moveFocus(1);
    return true;
  }

  /** Sets a field (the terminal editor's commit): a changed value empties the
   *  fields whose parent it is; a row picked with no parent chosen fills it. */
  function commit(f, value, shown, parentValue) {
    touched.add(f.name);
    if (f.parent && !values[f.parent] && parentValue) {
      values[f.parent] = parentValue;
      delete display[f.parent];
    }
    if ((values[f.name] || "") !== value) {
      values[f.name] = value;
      if (shown) display[f.name] = shown; else delete display[f.name];
      for (const child of form.fields) {
        if (child.parent === f.name && values[child.name]) { values[child.name] = ""; delete display[child.name]; }
      }
    }
    render();
    els[f.name].input.value = inputText(f);
    scheduleCheck(0);
  }

  // ---- date and date-time wheels (DateWheel.swift) ----
  const COLS = ["year", "month", "day", "hour", "minute"];
  const leap = (y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const daysIn = (y, m) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  const wrap = (n, lo, hi) => { const span = hi - lo + 1; return ((n - lo) % span + span) % span + lo; };
  const two = (n) => String(n).padStart(2, "0");
  const ord = (v) => (((v.year * 100 + v.month) * 100 + v.day) * 100 + v.hour) * 100 + v.minute;
  function parseDate(text) {
    const m = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}))?$/.exec(text || "");
    if (!m) return null;
    const v = { year: +m[1], month: +m[2], day: +m[3], hour: +(m[4] || 0), minute: +(m[5] || 0) };
    if (v.month < 1 || v.month > 12 || v.day < 1 || v.day > daysIn(v.year, v.month) || v.hour > 23 || v.minute > 59) return null;
    return v;
  }

  class Wheel {
    constructor(initial, withTime, interval, min, max) {
      this.withTime = withTime;
      this.step = interval >= 1 && interval <= 60 && 60 % interval === 0 ? interval : 1;
      const low = min || { year: 1900, month: 1, day: 1, hour: 0, minute: 0 };
      const high = max || { year: 2100, month: 12, day: 31, hour: 23, minute: 59 };
      if (!withTime) { low.hour = low.minute = high.hour = high.minute = 0; }
      this.min = low;
      this.max = ord(high) < ord(low) ? low : high;
      const v = { ...initial };
      if (!withTime) v.hour = v.minute = 0;
      v.minute -= v.minute % this.step;
      this.value = v;
      this.column = 0;
      this.typed = "";
      this.settle();
    }
    get columns() { return this.withTime ? 5 : 3; }
    canonical() {
      const v = this.value;
      const d = `${String(v.year).padStart(4, "0")}-${two(v.month)}-${two(v.day)}`;
      return this.withTime ? `${d} ${two(v.hour)}:${two(v.minute)}` : d;
    }
    moveColumn(delta) { this.column = Math.min(Math.max(0, this.column + delta), this.columns - 1); this.typed = ""; }
    turn(steps) {
      const v = this.value;
      this.typed = "";
      switch (COLS[this.column]) {
        case "year": v.year += steps; break;
        case "month": v.month = wrap(v.month + steps, 1, 12); break;
        case "day": v.day = wrap(v.day + steps, 1, daysIn(v.year, v.month)); break;
        case "hour": v.hour = wrap(v.hour + steps, 0, 23); break;
        default: v.minute = wrap(v.minute / this.step + steps, 0, 60 / this.step - 1) * this.step;
      }
      this.settle();
    }
    jump(last) {
      const v = this.value;
      this.typed = "";
      switch (COLS[this.column]) {
        case "year": v.year = last ? this.max.year : this.min.year; break;
        case "month": v.month = last ? 12 : 1; break;
        case "day": v.day = last ? daysIn(v.year, v.month) : 1; break;
        case "hour": v.hour = last ? 23 : 0; break;
        default: v.minute = last ? 60 - this.step : 0;
      }
      this.settle();
    }
    type(digit) {
      const v = this.value, col = COLS[this.column];
      this.typed += String(digit);
      const width = col === "year" ? 4 : 2;
      const n = Number(this.typed);
      const highest = { year: 9999, month: 12, day: daysIn(v.year, v.month), hour: 23, minute: 59 }[col];
      if (this.typed.length < width && n * 10 <= highest) return;
      if (col === "year") v.year = Math.max(1, n);
      else if (col === "month") v.month = Math.min(Math.max(1, n), 12);
      else if (col === "day") v.day = Math.min(Math.max(1, n), daysIn(v.year, v.month));
      else if (col === "hour") v.hour = Math.min(n, 23);
      else { const m = Math.min(n, 59); v.minute = m - (m % this.step); }
      this.settle();
      this.moveColumn(1);
    }
    neighbour(col, offset) {
      const v = this.value;
      switch (COLS[col]) {
        case "year": { const y = v.year + offset; return y >= this.min.year && y <= this.max.year ? y : null; }
        case "month": return wrap(v.month + offset, 1, 12);
        case "day": return wrap(v.day + offset, 1, daysIn(v.year, v.month));
        case "hour": return wrap(v.hour + offset, 0, 23);
        default: return wrap(v.minute / this.step + offset, 0, 60 / this.step - 1) * this.step;
      }
    }
    settle() {
      const v = this.value;
      v.day = Math.min(v.day, daysIn(v.year, v.month));
      if (ord(v) < ord(this.min)) this.value = { ...this.min };
      if (ord(this.value) > ord(this.max)) this.value = { ...this.max };
      const x = this.value;
      if (this.withTime && x.minute % this.step) {
        x.minute -= x.minute % this.step;
        if (ord(x) < ord(this.min)) x.minute += this.step;
      }
    }
  }

  /** Now in UTC−12, `YYYY-MM-DD HH:mm`: notBefore as the offline data sends it ("now", unresolved). */
  function earliestNow() {
    return new Date(Date.now() - 12 * 3600e3).toISOString().slice(0, 16).replace("T", " ");
  }

  function nowParts() {
    const d = new Date();
    return { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hour: d.getHours(), minute: d.getMinutes() };
  }

  /** Enter (or the picker button) on a date field: the typed text counts. Lenient
   *  text goes to Check first; its canonical value replaces the text and the
   *  wheel opens on it. Text Check cannot read keeps its problem showing and the
   *  wheel opens on today, committing nothing (Escape gives the text back). */
  async function enterDate(f) {
    const e = els[f.name];
    if ((picker && picker.field === f) || e.pending) return;
    const text = e.input.value.trim();
    if (!text) { openDate(f); return; }
    if (values[f.name] !== text) typed(f, text);
    touched.add(f.name);
    clearTimeout(checkTimer);
    const pending = (e.pending = {});
    let answered = false;
    try { answered = await runCheck(f.name); } finally { if (e.pending === pending) e.pending = null; }
    // typed on, went elsewhere, or another picker opened meanwhile: no wheel
    if (document.activeElement !== e.input || picker || e.input.value.trim() !== (values[f.name] || "").trim()) return;
    let at = parseDate(values[f.name]);
    if (!answered && !at) { // Check unreachable (offline): the plain numeric forms only
      const canon = localDate(text, f.type === "datetime");
      if (canon) { values[f.name] = canon; e.input.value = canon; at = parseDate(canon); }
    }
    render();
    openDate(f, !at);
  }

  /** Offline only (Check does this when it can be reached): 1990-5-17, 1990/5/17, 1990.5.17, 19900517, with " 9:05" for date-times. */
  function localDate(text, withTime) {
    const m = /^(\d{4})(?:([-/.])(\d{1,2})\2(\d{1,2})|(\d{2})(\d{2}))(?:[ T](\d{1,2}):(\d{2}))?$/.exec(text.trim());
    if (!m || !!m[7] !== withTime) return null;
    const canon = `${m[1]}-${two(+(m[3] || m[5]))}-${two(+(m[4] || m[6]))}` + (withTime ? ` ${two(+m[7])}:${m[8]}` : "");
    return parseDate(canon) ? canon : null;
  }

  /** Opens the wheel on the field's value, or on today (`unread`: the typed text could not be read). */
  function openDate(f, unread) {
    if (picker) cancelPicker();
    const e = els[f.name];
    const withTime = f.type === "datetime";
    const start = parseDate(values[f.name]);
    const initial = start || nowParts();
    // notBefore (now in UTC−12): new values start there; a stored earlier value stays reachable
    const notBefore = f.notBefore === "now" ? earliestNow() : f.notBefore;
    const floor = [f.min, notBefore && !(start && values[f.name] < notBefore) ? notBefore : null]
      .filter(Boolean).sort().pop();
    const wheel = new Wheel(initial, withTime, f.minuteInterval || 1, parseDate(floor), parseDate(f.max));
    // onToday: what the wheel shows was never asked for (today, or a typed value clamped to
    // min/max), so only Enter or OK commits it, not Done
    picker = { kind: "date", field: f, wheel, earlier: values[f.name] || "",
      onToday: !start || !!unread || wheel.canonical() !== values[f.name] };
    e.input.setAttribute("aria-expanded", "true");
    e.popup.hidden = false;
    drawWheel(true);
    e.popup.scrollIntoView({ block: "nearest" });
  }

  function drawWheel(focus) {
    const p = picker, e = els[p.field.name], wh = p.wheel;
    const names = w().cols;
    if (e.cols.children.length !== wh.columns) { // built once per opening; later only updated (the focus stays)
      const cols = [];
      for (let c = 0; c < wh.columns; c++) {
        cols.push(h("div", {
          role: "spinbutton", tabindex: "0", class: "col", "data-col": c, "aria-label": names[c],
          onfocus: () => { if (wh.column !== c) { wh.column = c; wh.typed = ""; } },
        },
        h("span", { class: "cap", "aria-hidden": "true" }, names[c]),
        h("span", { class: "n", "aria-hidden": "true", onclick: () => { wh.column = c; wh.turn(-1); p.onToday = false; drawWheel(true); } }),
        h("span", { class: "n cur", "aria-hidden": "true" }),
        h("span", { class: "n", "aria-hidden": "true", onclick: () => { wh.column = c; wh.turn(1); p.onToday = false; drawWheel(true); } })));
      }
      e.cols.replaceChildren(...cols);
    }
    const maxOf = [wh.max.year, 12, daysIn(wh.value.year, wh.value.month), 23, 60 - wh.step];
    const minOf = [wh.min.year, 1, 1, 0, 0];
    [...e.cols.children].forEach((col, c) => {
      const fmt = (n) => (n === null ? "" : c === 0 ? String(n) : two(n));
      const cur = wh.neighbour(c, 0);
      col.setAttribute("aria-valuenow", cur);
      col.setAttribute("aria-valuetext", fmt(cur));
      col.setAttribute("aria-valuemin", minOf[c]);
      col.setAttribute("aria-valuemax", maxOf[c]);
      const spans = col.children;
      spans[1].textContent = fmt(wh.neighbour(c, -1)) || "\u00a0";
      spans[2].textContent = c === wh.column && wh.typed ? wh.typed : fmt(cur);
      spans[3].textContent = fmt(wh.neighbour(c, 1)) || "\u00a0";
    });
    if (focus && document.activeElement !== e.cols.children[wh.column]) e.cols.children[wh.column].focus();
  }

  function wheelKey(f, ev) {
    const p = picker;
    if (!p || p.kind !== "date" || p.field !== f) return;
    if (!ev.target.matches("[role=spinbutton]")) {
      if (ev.key === "Escape") { ev.preventDefault(); cancelPicker(); els[f.name].input.focus(); }
      return;
    }
    const wh = p.wheel;
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") return; // Done: the document's handler
    switch (ev.key) {
      case "ArrowLeft": wh.moveColumn(-1); break;
      case "ArrowRight": wh.moveColumn(1); break;
      case "ArrowUp": wh.turn(-1); break;
      case "ArrowDown": wh.turn(1); break;
      case "PageUp": wh.turn(-10); break;
      case "PageDown": wh.turn(10); break;
      case "Home": wh.jump(false); break;
      case "End": wh.jump(true); break;
      case "Enter": ev.preventDefault(); commitPicker(true); return;
      case "Escape": ev.preventDefault(); ev.stopPropagation(); cancelPicker(); els[f.name].input.focus(); return;
      default:
        if (/^[0-9]$/.test(ev.key)) { wh.type(Number(ev.key)); break; }
        return;
    }
    p.onToday = false;
    ev.preventDefault();
    drawWheel(true);
  }

  // ---- Check ----
  function scheduleCheck(delay) {
    clearTimeout(checkTimer);
    checkTimer = setTimeout(runCheck, delay);
  }

  /** Check; `force`: the field (focused, a date's Enter) whose canonical value
   *  replaces its text now. Resolves to whether this answer was applied. */
  async function runCheck(force) {
    const seq = ++checkSeq;
    const sent = checkedValues();
    let r;
    try {
      // editing (?edit=ID): the entry is never its own possible duplicate
      const check = { form: FORM, fields: sent, locale: E.lang };
      if (editor) check.id = params.get("edit");
      r = await quick("io.entryd.Forms.Check", check, { redirect: false });
    } catch (err) {
      // offline: the page's own checks (offline.js), as far as it can judge;
      // logged out: no redirect while typing (Done keeps the values, then logs in)
      if (err.status === 401) setStatus("bad", E.describe(err));
      if (err.transient) {
        await Offline.load();
        if (seq !== checkSeq) return false;
        problems = Offline.check(form, sent, E.lang);
        for (const p of problems) if (p.code === "required" && p.field) learned.add(p.field);
        render();
        if (picker && picker.kind === "list") els[picker.field.name].input.value = picker.query;
      }
      return false;
    }
    if (seq !== checkSeq) return false;
    problems = r.problems || [];
    // duplicates.js: a warning, never a problem; an empty form's Check keeps the last Add's
    if (!KIOSK && Object.keys(sent).length) Duplicates.fromCheck(r.duplicates);
    for (const p of problems) if (p.code === "required" && p.field) learned.add(p.field);
    for (const f of form.fields) {
      const n = f.name;
      if ((values[n] || "") !== (sent[n] || "")) continue; // changed since
      if (r.display && r.display[n]) display[n] = r.display[n];
      const canon = r.fields && r.fields[n];
      const e = els[n];
      if (canon && canon !== values[n] && !isList(f) && (document.activeElement !== e.input || force === n) && !(picker && picker.field === f)) {
        values[n] = canon;
        if (force === n) e.input.value = inputText(f);
      }
    }
    render();
    if (picker && picker.kind === "list") els[picker.field.name].input.value = picker.query;
    return true;
  }

  // ---- Done ----
  /** Add with the item's id; `eager`: given up on at once while the page holds itself offline (Done), not by the outbox. */
  async function add(item, eager) {
    if (eager && knownOffline()) throw new E.ApiError(0, "", {});
    try {
      const r = await E.call("io.entryd.Entries.Add", { form: item.form, id: item.id, fields: item.fields, locale: item.locale },
        { redirect: false, timeout: ADD_WAIT });
      online();
      return r;
    } catch (err) {
      if (err.is && err.is("EntryExists")) return { entry: { id: item.id } }; // this id is stored: a retry of ours
      throw noted(err);
    }
  }

  async function submit() {
    if (submitting || !form) return;
    // an open picker's value is sent, but never a wheel's today that nobody chose
    if (picker && picker.kind === "date" && picker.onToday) cancelPicker();
    else if (picker) commitPicker(false);
    clearTimeout(checkTimer);
    submitAttempted = true;
    if (editor) { await editor.save(); return; } // Update with the changed fields (edit.js)
    // the web user who submits (the last session confirmed, offline too): a
    // queued submission is sent only while that user is logged in
    const item = { id: draftId, user: E.knownUser(), form: form.name, fields: checkedValues(), locale: E.lang, queuedAt: new Date().toISOString() };
    submitting = true;
    setStatus("info", w().submitting);
    render();
    try {
      const r = await add(item, true);
      if (fixing === item.id) { fixing = null; await Outbox.remove(item.id); }
      resetForm();
      setStatus("ok", KIOSK ? w().thanks : w().stored);
      if (!KIOSK) Duplicates.fromAdd(r.duplicates);
    } catch (err) {
      let local = [];
      if (err.transient) { await Offline.load(); local = Offline.check(form, item.fields, E.lang); }
      if (local.length) {
        // offline, and the page sees problems: nothing is queued that the server would refuse
        showProblems(local, w().fixOffline);
      } else if ((err.transient || err.status === 401) && !item.user) {
        // nobody known to be logged in: a queued submission would be sent as
        // whoever logs in next, so it is not queued (the values stay here)
        setStatus("bad", w().notLoggedIn);
      } else if (err.transient) {
        await Outbox.put(item);
        resetForm();
        setStatus("info", w().queued);
        updateQueue();
      } else if (err.is && err.is("ValidationFailed")) {
        showProblems(err.parameters.problems || [], w().fix);
      } else if (err.status === 401) {
        // logged out: the submission waits in the outbox (sent once logged in again), then the login
        await Outbox.put(item);
        resetForm();
        E.toLogin();
      } else {
        setStatus("bad", E.describe(err));
      }
    } finally {
      submitting = false;
      render();
    }
  }

  /** Shows problems beside their fields (Add's, or the page's own offline) and focuses the first. */
  function showProblems(list, sentence) {
    problems = list;
    for (const p of problems) if (p.code === "required" && p.field) learned.add(p.field);
    setStatus("bad", sentence);
    submitting = false;
    render();
    const first = form.fields.find((f) => isShown(f) && shownProblems(f).length);
    if (first) els[first.name].input.focus();
  }

  /** Empties the form (after a submit, a kiosk pause): no value of the last person stays in the page. */
  function resetForm() {
    if (picker) cancelPicker();
    Duplicates.clear();
    values = {}; display = {}; problems = [];
    touched = new Set(); learned = new Set(); submitAttempted = false;
    draftId = uuidv7();
    clearTimeout(checkTimer);
    checkSeq++;
    for (const f of form.fields) {
      const e = els[f.name];
      e.input.value = "";
      if (e.list) e.list.replaceChildren();
      if (e.cols) e.cols.replaceChildren();
    }
    current = shownFields().length ? form.fields.indexOf(shownFields()[0]) : 0;
    render();
    const first = shownFields()[0];
    if (first) els[first.name].input.focus();
  }

  // ---- the outbox ----
  // One outbox for every tab (outbox.js): the count is redrawn whenever it
  // changes, here or in another tab, and one tab sends at a time. An item the
  // server refuses for good is set aside and the next one is sent; staff fix
  // those on /outbox. The public at a kiosk never sees them, not even counted.
  let flushing = false;
  let fixing = null; // the id of a set-aside submission loaded by ?fix=ID
  let pauseUntil = 0, backoff = 0; // after 429 / 503: wait, doubling up to 5 minutes
  const PERMANENT = [400, 403, 404, 409, 413];

  /** Whether a queued submission is this user's: queued while they were logged in. */
  const mine = (item, user) => !!user && item.user === user;

  async function updateQueue() {
    const box = $("queue");
    let items = [];
    try { items = await Outbox.all(); } catch (e) { items = []; }
    const user = E.knownUser();
    const own = items.filter((i) => mine(i, user));
    const waiting = own.filter((i) => !i.rejected).length;
    const rejected = items.filter((i) => i.rejected).length;
    const others = items.filter((i) => !i.rejected && !mine(i, user)).length; // counted only: never their contents
    const parts = [];
    if (waiting) parts.push(h("span", { id: "queue-count", "data-count": waiting }, w().waiting(waiting)));
    if (rejected && !KIOSK) {
      parts.push(h("a", { href: "/outbox", id: "queue-rejected", "data-rejected": rejected }, w().rejectedQueued(rejected)));
    }
    if (others) parts.push(h("span", { id: "queue-other", "data-count": others }, w().otherUser(others)));
    if (waiting) parts.push(h("button", { type: "button", class: "btn", onclick: () => { pauseUntil = 0; flush(); } }, w().retry));
    if (knownOffline()) parts.push(h("span", { id: "offline-note" }, w().offlineNote));
    box.replaceChildren(...parts);
  }

  /** Sends this user's waiting submissions, oldest first; never stops at one the server refuses. */
  async function flush() {
    if (flushing || Date.now() < pauseUntil) return;
    flushing = true;
    try {
      await Outbox.exclusive(flushItems);
    } finally {
      flushing = false;
      updateQueue();
    }
  }

  async function flushItems() {
    // who is logged in now, from the server (never a page's memory): only
    // that user's submissions are sent; the others wait for their user
    let s = null;
    try { s = await E.loadSession(); } catch (e) { return; }
    let items = [];
    try { items = await Outbox.all(); } catch (e) { return; }
    if (!s) {
      // logged out: the items stay, and a login sends them
      if (!KIOSK && items.some((i) => !i.rejected)) setStatus("bad", w().loginToSend);
      return;
    }
    items = items.filter((i) => mine(i, s.user) && !i.rejected);
    items.sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const item of items) {
      if (!(await Outbox.get(item.id))) continue; // sent by another tab meanwhile
      try {
        await add(item);
        await Outbox.remove(item.id);
        backoff = 0;
      } catch (err) {
        if (err.is && err.is("EntryErased")) {
          // the person was erased after an earlier send of this id: their values go at once
          await Outbox.remove(item.id);
          continue;
        }
        if (err.status === 401) {
          // logged out meanwhile: the items stay; a login sends them
          if (!KIOSK) setStatus("bad", w().loginToSend);
          return;
        }
        if (err.status === 429 || err.status === 503) {
          backoff = Math.min(backoff ? backoff * 2 : RETRY_MS, 300000);
          pauseUntil = Date.now() + Math.max(backoff, 1000 * (Number(err.parameters.retryAfter) || 0));
          return;
        }
        if (err.transient) return; // offline: try again later, in order
        if (err.is && err.is("ValidationFailed") && !KIOSK && !Object.keys(checkedValues()).length) {
          // back into this (empty) form for its user to fix, with its id
          await Outbox.remove(item.id);
          values = { ...item.fields }; display = {}; draftId = item.id;
          problems = err.parameters.problems || [];
          submitAttempted = true;
          render();
          for (const f of form.fields) els[f.name].input.value = inputText(f);
          setStatus("bad", w().reloaded);
          scheduleCheck(0);
          continue;
        }
        // an answer this page does not know (500, 501): it stays waiting, the next one goes on
        if (!PERMANENT.includes(err.status)) continue;
        // refused for good: set aside for staff, the next one goes on
        await Outbox.put({ ...item, rejected: { status: err.status, error: err.name || "",
          problems: (err.parameters && err.parameters.problems) || [], at: new Date().toISOString() } });
      }
    }
  }

  /** ?fix=ID (from /outbox): a set-aside submission back in the form, with its id, for staff to correct. */
  async function loadFix() {
    const id = params.get("fix");
    if (!id || KIOSK) return;
    let item = null;
    try { item = await Outbox.get(id); } catch (e) { item = null; }
    if (!item || (item.form && item.form !== form.name)) return;
    values = { ...item.fields }; display = {}; draftId = item.id;
    problems = (item.rejected && item.rejected.problems) || [];
    submitAttempted = true;
    fixing = item.id;
    render();
    for (const f of form.fields) els[f.name].input.value = inputText(f);
    setStatus("bad", w().fixing);
    scheduleCheck(0);
  }

  // ---- kiosk ----
  let idleTimer = 0;
  let idleSwitch = null; // {cleared}: a pause switched the language back; finished once the form is rebuilt
  /** After IDLE_MS without input: the form emptied, and the language back to the kiosk's own
   *  (E.defaultLang: ?lang=, else the browser's), so the next person starts where everyone does. */
  function idle() {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      const cleared = Object.keys(values).some((k) => values[k]) || !!picker;
      if (cleared) resetForm();
      if (E.lang !== E.defaultLang()) {
        idleSwitch = { cleared };
        E.setLang(E.defaultLang());
        return;
      }
      setStatus(cleared ? "info" : "", cleared ? w().idleReset : "");
    }, IDLE_MS);
  }

  // ---- start ----
  document.addEventListener("keydown", (ev) => {
    if (((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") || (ev.ctrlKey && (ev.key === "s" || ev.key === "S"))) {
      ev.preventDefault();
      submit();
    }
  });
  document.addEventListener("pointerdown", (ev) => {
    if (picker && !els[picker.field.name].control.contains(ev.target)) cancelPicker();
  });
  $("prev").addEventListener("click", () => moveFocus(-1));
  $("next").addEventListener("click", () => moveFocus(1));
  $("done").addEventListener("click", () => submit());
  $("form").addEventListener("submit", (ev) => ev.preventDefault());

  E.onLang(async () => {
    if (!form) return;
    if (picker) cancelPicker();
    try { await loadForm(); } catch (e) { return; }
    build();
    render();
    if (editor) editor.words();
    updateQueue();
    const cleared = !!idleSwitch && idleSwitch.cleared;
    setStatus(cleared ? "info" : "", cleared ? w().idleReset : "");
    if (idleSwitch && shownFields()[0]) els[shownFields()[0].name].input.focus();
    idleSwitch = null;
    scheduleCheck(0);
    prefetch();
  });

  let prefetched = false;
  function prefetch() {
    const rows = form.fields.filter((f) => isList(f) && !f.parent).map((f) => options(f, null, "").catch(() => {}));
    Promise.all(rows).then(() => { prefetched = true; });
  }

  async function start() {
    E.setLang(KIOSK ? E.defaultLang() : E.lang); // a kiosk never starts in the last visitor's language
    let s = null;
    try {
      s = await E.loadSession();
      if (!s) { E.toLogin(); return; }
    } catch (e) { s = null; noted(e); } // offline: the cached form and the outbox still work
    E.header(s);
    if (KIOSK) { $("nav").hidden = true; $("logout").hidden = true; $("who").hidden = true; }
    Offline.load(); // the form's data for offline use, fetched while the form is online
    try { await loadForm(); } catch (e) { return; }
    build();
    current = form.fields.indexOf(shownFields()[0]);
    render();
    els[form.fields[current].name].input.focus();
    prefetch();
    if (editor) { await editor.start(editing, s); document.body.dataset.ready = "1"; return; }
    await loadFix();
    updateQueue();
    Outbox.onChange(() => updateQueue());
    flush();
    window.addEventListener("online", () => { online(); flush(); });
    setInterval(() => { Outbox.count().then((n) => { if (n) flush(); }).catch(() => {}); }, RETRY_MS);
    if (KIOSK) { ["keydown", "pointerdown", "input"].forEach((t) => document.addEventListener(t, idle, true)); idle(); }
    document.body.dataset.ready = "1";
  }

  /** What edit.js reads and sets of the form (?edit=ID). */
  const editing = {
    get form() { return form; },
    values: () => ({ ...values }),
    isShown: (name) => isShown(fieldByName(name)),
    /** The text a field shows: a list's label, a phone's display form, else its value. */
    shown: (name) => shownValue(fieldByName(name)),
    /** Puts the given values (and their display) in the form, as if never touched. */
    fill(v, d) {
      if (picker) cancelPicker();
      values = { ...v }; display = { ...d }; problems = [];
      touched = new Set(); learned = new Set(); submitAttempted = false;
      render();
      for (const f of form.fields) els[f.name].input.value = inputText(f);
      scheduleCheck(0);
    },
    /** Sets one field (a choice in a version conflict). */
    set(name, value, shown) {
      values[name] = value;
      if (shown) display[name] = shown; else delete display[name];
      render();
      els[name].input.value = inputText(fieldByName(name));
      scheduleCheck(0);
    },
    busy(b) { submitting = b; render(); },
    showProblems, setStatus,
  };

  window.entrydForm = {
    flush, reset: resetForm,
    /** Options' rows for a picker (fresh: not from the page's cache), for the tests. */
    search: (field, parent, query) => options(fieldByName(field), parent, query, true),
    get draftId() { return draftId; }, get flushing() { return flushing; },
    /** The top-level pickers' rows are in the page's cache (asked once the form is shown). */
    get prefetched() { return prefetched; },
  };
  start();
})();
