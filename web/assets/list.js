/* global Entryd */
// The list page (read role): Entries.List with search, filters and cursor
// paging; an entry's History in a dialog.
"use strict";

(() => {
  const E = Entryd, h = E.h;
  const PAGE = Math.min(Math.max(1, Number(new URLSearchParams(location.search).get("limit")) || 20), 200);
  const W = {
    zh: {
      title: "条目 · entryd", filter: "筛选", text: "姓名包含", country: "国家", province: "省份", bornFrom: "出生不早于", bornTo: "出生不晚于",
      order: "排序", "o-created": "创建时间（新的在前）", "o-updated": "修改时间（新的在前）", "o-name": "姓名", "o-birthday": "生日",
      deleted: "含已删除", search: "搜索", "c-name": "姓名", "c-birthday": "生日", "c-country": "国家", "c-region": "地区",
      "c-contact": "联系方式", "c-created": "创建", "c-by": "创建者", "c-history": "操作", prev: "上一页", next: "下一页", close: "关闭",
      total: (n) => `共 ${n} 条`, page: (p) => `第 ${p} 页`, none: "没有符合条件的条目。", history: "历史", historyOf: (n) => `历史：${n}`,
      ops: { create: "创建", update: "修改", delete: "删除", restore: "恢复", erase: "清除" }, by: "操作者", at: "时间", reason: "原因",
      deletedMark: "（已删除）", loading: "正在加载…", changed: "有新的修改：回到第 1 页查看。",
      datePh: "如 1990年5月17日", refused: "筛选条件有误，没有列出条目。",
      appointment: "预约时间", "a-any": "不限", "a-today": "今天", "a-tomorrow": "明天", "a-range": "日期范围",
      appointmentFrom: "预约不早于", appointmentTo: "预约不晚于", "o-appointment": "预约时间", "c-appointment": "预约时间",
      apptPh: "如 2027年3月9日", edit: "编辑", editOf: (n) => `编辑：${n}`,
      find: "查找", findPh: "姓名、拼音、电话或邮箱",
    },
    en: {
      title: "Entries · entryd", filter: "Filter", text: "Name contains", country: "Country", province: "Province", bornFrom: "Born from", bornTo: "Born to",
      order: "Order", "o-created": "Created (newest first)", "o-updated": "Updated (newest first)", "o-name": "Name", "o-birthday": "Birthday",
      deleted: "Include deleted", search: "Search", "c-name": "Name", "c-birthday": "Birthday", "c-country": "Country", "c-region": "Region",
      "c-contact": "Contact", "c-created": "Created", "c-by": "Created by", "c-history": "Actions", prev: "Previous page", next: "Next page", close: "Close",
      total: (n) => `${n} entr${n === 1 ? "y" : "ies"}`, page: (p) => `Page ${p}`, none: "No entries match.", history: "History", historyOf: (n) => `History: ${n}`,
      ops: { create: "created", update: "updated", delete: "deleted", restore: "restored", erase: "erased" }, by: "By", at: "At", reason: "Reason",
      deletedMark: " (deleted)", loading: "Loading…", changed: "Entries changed: see page 1.",
      datePh: "e.g. 1990-5-17", refused: "No entries listed: a filter is refused.",
      appointment: "Appointment", "a-any": "Any", "a-today": "Today", "a-tomorrow": "Tomorrow", "a-range": "Dates",
      appointmentFrom: "Appointment from", appointmentTo: "Appointment to", "o-appointment": "Appointment", "c-appointment": "Appointment",
      apptPh: "e.g. 2027-3-9", edit: "Edit", editOf: (n) => `Edit: ${n}`,
      find: "Find", findPh: "Name, pinyin, phone or e-mail",
    },
  };
  const w = () => W[E.lang];
  const $ = (id) => document.getElementById(id);
  let cursors = [null], pageIndex = 0, nextCursor = null, entries = [];
  // Forms.GetForm of each form met (by language): field labels and types for the filters and the history
  const forms = new Map();
  const FILTER_INPUTS = {
    search: "q-search", text: "q-text", country: "q-country", province: "q-province", bornFrom: "q-from", bornTo: "q-to",
    appointmentFrom: "q-appt-from", appointmentTo: "q-appt-to",
  };
  // the field each form lists as its appointment: the date-time field named appointment, else its first
  const apptFields = new Map();
  const appointmentField = (form) => {
    const fields = (form && form.fields) || [];
    const f = fields.find((x) => x.name === "appointment" && x.type === "datetime") || fields.find((x) => x.type === "datetime");
    return f || null;
  };

  async function getForm(name) {
    const key = JSON.stringify([E.lang, name || ""]);
    if (!forms.has(key)) {
      forms.set(key, E.call("io.entryd.Forms.GetForm", { name: name || null, locale: E.lang })
        .then((r) => r.form, (err) => { forms.delete(key); throw err; }));
    }
    return forms.get(key);
  }
  const fieldOf = (form, name) => (form && form.fields || []).find((f) => f.name === name) || null;

  async function words() {
    document.title = w().title;
    $("filters").setAttribute("aria-label", w().filter);
    document.querySelectorAll("[data-l]").forEach((el) => { el.textContent = w()[el.dataset.l]; });
    $("q-search").placeholder = w().findPh;
    $("q-from").placeholder = w().datePh;
    $("q-to").placeholder = w().datePh;
    $("q-appt-from").placeholder = w().apptPh;
    $("q-appt-to").placeholder = w().apptPh;
    // the country and province filters are the form's fields: their labels are the form's
    let form = null;
    try { form = await getForm(null); } catch (err) { return; }
    for (const k of ["country", "province"]) {
      const f = fieldOf(form, k);
      const span = document.querySelector(`[data-l=${k}]`);
      if (f && f.label && span) span.textContent = f.label;
    }
    const appt = appointmentField(form);
    if (appt && appt.label) {
      document.querySelector("[data-l=appointment]").textContent = appt.label;
      document.querySelector("[data-l=c-appointment]").textContent = appt.label;
      document.querySelector("[data-l=o-appointment]").textContent = appt.label;
    }
  }

  /** The label a person sees next to a filter (never the parameter's name). */
  function filterLabel(key) {
    const input = FILTER_INPUTS[key] && $(FILTER_INPUTS[key]);
    const span = input && input.closest("label").querySelector("[data-l]");
    return span ? span.textContent : null;
  }

  /** A problem of a filter, with the filter's label where the daemon names the parameter. */
  function filterMessage(p) {
    const label = p.field && filterLabel(p.field);
    if (!label) return p.message;
    const named = new RegExp(`\\s?\\b${p.field}\\b\\s?`);
    if (!named.test(p.message)) return `${label}${E.lang === "zh" ? "：" : ": "}${p.message}`;
    return p.message.replace(named, E.lang === "zh" ? `“${label}”` : ` "${label}" `);
  }

  function status(kind, text) { const s = $("status"); s.className = "status " + kind; s.textContent = text || ""; }

  function filter() {
    const f = {};
    const put = (k, id) => { const v = $(id).value.trim(); if (v) f[k] = v; };
    put("search", "q-search"); put("text", "q-text"); put("country", "q-country"); put("province", "q-province"); put("bornFrom", "q-from"); put("bornTo", "q-to");
    // today and tomorrow are this browser's days (its time zone): sent as dates
    const when = $("q-appt").value;
    if (when === "today" || when === "tomorrow") {
      f.appointmentFrom = f.appointmentTo = localDate(when === "tomorrow" ? 1 : 0);
    } else if (when === "range") {
      put("appointmentFrom", "q-appt-from"); put("appointmentTo", "q-appt-to");
    }
    return f;
  }

  /** The date `days` after today in the browser's time zone, YYYY-MM-DD. */
  function localDate(days) {
    const t = new Date();
    t.setDate(t.getDate() + days);
    const pad = (n) => String(n).padStart(2, "0");
    return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}`;
  }

  /** Shows the range's two dates only for a range of dates; an appointment filter orders by time. */
  function apptChanged() {
    const range = $("q-appt").value === "range";
    $("appt-range-from").hidden = !range;
    $("appt-range-to").hidden = !range;
    if ($("q-appt").value && ($("q-order").value === "created" || $("q-order").value === "updated")) $("q-order").value = "appointment";
  }

  // the latest load: an earlier one answered later (a language switch, a search typed while
  // the first page loads) must not draw over it
  let loadSeq = 0;

  async function load() {
    const seq = ++loadSeq;
    status("info", w().loading);
    const order = $("q-order").value;
    try {
      const r = await E.call("io.entryd.Entries.List", {
        filter: filter(), order, limit: PAGE, cursor: cursors[pageIndex], includeDeleted: $("q-deleted").checked, locale: E.lang,
      });
      if (seq !== loadSeq) return;
      const page = r.entries || [];
      for (const name of new Set(page.map((e) => e.form || ""))) {
        const key = E.lang + "\u0000" + name;
        if (apptFields.has(key)) continue;
        try { const field = appointmentField(await getForm(name || null)); apptFields.set(key, field ? field.name : null); } catch (err) { apptFields.set(key, "appointment"); }
      }
      if (seq !== loadSeq) return;
      entries = page;
      nextCursor = r.cursor || null;
      markRefused([]);
      $("caption").textContent = w().total(r.total);
      if (pageIndex === 0) $("live").textContent = "";
      status("", entries.length ? "" : w().none);
      draw();
    } catch (err) {
      if (seq !== loadSeq) return;
      const problems = err.parameters && err.parameters.problems;
      status("bad", problems ? problems.map(filterMessage).join(" ") : E.describe(err));
      if (problems) {
        // the table no longer answers the filters shown: emptied, not left as it was
        markRefused(problems.map((p) => p.field));
        entries = [];
        nextCursor = null;
        $("caption").textContent = w().refused;
        draw();
      }
    }
  }

  function markRefused(keys) {
    for (const [k, id] of Object.entries(FILTER_INPUTS)) {
      const bad = keys.includes(k);
      $(id).setAttribute("aria-invalid", String(bad));
      if (bad) $(id).setAttribute("aria-describedby", "status"); else $(id).removeAttribute("aria-describedby");
    }
  }

  function draw() {
    $("rows").replaceChildren(...entries.map((e) => {
      const d = e.display || {}, f = e.fields || {};
      const contact = d.phone || d.email || f.phone || f.email || "";
      return h("tr", { "data-id": e.id },
        h("td", { class: e.deleted ? "deleted" : null }, (d.name || f.name || "") + (e.deleted ? w().deletedMark : "")),
        h("td", { class: "appointment" }, appointmentOf(e)),
        h("td", {}, d.birthday || f.birthday || ""),
        h("td", {}, d.country || f.country || ""),
        h("td", {}, d.region || d.province || d.city || ""),
        h("td", {}, contact),
        h("td", {}, (e.createdAt || "").replace("T", " ").slice(0, 16)),
        h("td", {}, e.createdBy || ""),
        h("td", {}, h("button", { type: "button", class: "btn", "aria-label": w().historyOf(d.name || e.id), onclick: () => history(e) }, w().history),
          canChange() ? h("a", { class: "btn", href: editLink(e), "data-edit": e.id, "aria-label": w().editOf(d.name || e.id) }, w().edit) : null));
    }));
    $("prev-page").disabled = pageIndex === 0;
    $("next-page").disabled = !nextCursor;
    $("page-info").textContent = w().page(pageIndex + 1);
  }

  /** Whether the session may change entries (Update, Delete, Restore: write and admin, as on the socket). */
  const canChange = () => !!E.session && (E.session.role === "write" || E.session.role === "admin");
  /** The entry in the form page (edit.js): /?edit=ID, with its form. */
  const editLink = (e) => "/?edit=" + encodeURIComponent(e.id) + (e.form ? "&form=" + encodeURIComponent(e.form) : "");

  /** The entry's appointment as stored (a wall-clock time): its form's appointment field. */
  function appointmentOf(e) {
    const key = E.lang + "\u0000" + (e.form || "");
    const name = apptFields.has(key) ? apptFields.get(key) : "appointment";
    if (!name) return "";
    return (e.display || {})[name] || (e.fields || {})[name] || "";
  }

  async function history(e) {
    const dlg = $("history");
    $("history-title").textContent = w().historyOf((e.display || {}).name || e.id);
    $("history-list").replaceChildren(h("li", {}, w().loading));
    dlg.showModal();
    try {
      const r = await E.call("io.entryd.Entries.History", { id: e.id, locale: E.lang });
      const changes = r.changes || [];
      let form = null;
      try { form = await getForm(e.form || (changes[0] && changes[0].form) || null); } catch (err) { form = null; }
      const shown = new Map(); // "field\u0000value" → the value as people read it
      await Promise.all(changes.flatMap((c) => Object.entries(c.fields || {}).map(async ([k, v]) => {
        shown.set(k + "\u0000" + v, await displayValue(form, e, k, v, c.fields));
      })));
      const label = (k) => { const f = fieldOf(form, k); return f && f.label ? f.label : k; };
      $("history-list").replaceChildren(...changes.map((c) => h("li", { "data-op": c.op },
        h("strong", {}, w().ops[c.op] || c.op), " · ", (c.at || "").replace("T", " ").slice(0, 19),
        h("dl", {},
          h("dt", {}, w().by), h("dd", { class: "actor" }, c.actor || ""),
          c.reason ? [h("dt", {}, w().reason), h("dd", {}, c.reason)] : null,
          orderedFields(form, c.fields).map(([k, v]) => [h("dt", { "data-field": k }, label(k)),
            h("dd", { "data-field": k, class: isFlagged(form, k) ? "emoji-capable" : null }, shown.get(k + "\u0000" + v) || v)])))));
    } catch (err) {
      $("history-list").replaceChildren(h("li", {}, E.describe(err)));
    }
  }

  const LISTS = ["country", "province", "city", "choice"];
  const isFlagged = (form, k) => { const f = fieldOf(form, k); return !!f && f.type === "country"; };

  /** A change's fields in the form's order (unknown ones last, as they are). */
  function orderedFields(form, fields) {
    const names = (form && form.fields || []).map((f) => f.name);
    const pos = (k) => { const i = names.indexOf(k); return i < 0 ? names.length : i; };
    return Object.entries(fields || {}).sort((a, b) => pos(a[0]) - pos(b[0]));
  }

  /** A stored value as people read it: the entry's display when it is the current
   *  value, else the row of Forms.Options (countries with their flag); else as stored. */
  async function displayValue(form, entry, k, v, changed) {
    if (!v) return v;
    const cur = entry.fields || {}, d = entry.display || {};
    if (cur[k] === v && d[k]) return d[k];
    const f = fieldOf(form, k);
    if (!f || !LISTS.includes(f.type)) return v;
    try {
      const parent = f.parent ? (changed && changed[f.parent]) || cur[f.parent] || null : null;
      const r = await E.call("io.entryd.Forms.Options", { form: form.name, field: k, parent, query: v, locale: E.lang, limit: 100 });
      const row = (r.options || []).find((o) => o.value === v);
      if (!row) return v;
      const flag = row.flag || (f.type === "country" ? E.flagOf(row.value) : "");
      return flag ? `${flag} ${row.label}` : row.label;
    } catch (err) {
      return v;
    }
  }

  // Live: the change feed (Server-Sent Events) from the node's current seq;
  // the first page reloads when entries change, other pages say so.
  let feed = null, reloadTimer = 0;
  async function live() {
    if (!window.EventSource || feed) return;
    let seq;
    try { seq = (await E.call("io.entryd.Sync.Status", {})).seq; } catch (err) { return; }
    feed = new EventSource(`/api/v1/io.entryd.Sync.Changes?since=${encodeURIComponent(seq)}`);
    feed.addEventListener("changes", (ev) => {
      let reply = {};
      try { reply = JSON.parse(ev.data); } catch (e) { return; }
      if (!reply.changes || !reply.changes.length) return;
      if (pageIndex === 0) { clearTimeout(reloadTimer); reloadTimer = setTimeout(load, 300); }
      else $("live").textContent = w().changed;
    });
  }

  // A page left for another stays in the browser's back/forward cache with its
  // feed open: each holds one of the browser's few connections to the site
  // (6 over HTTP/1.1) until later pages wait forever. The feed closes when the
  // page is hidden away and opens again, with a fresh first page, if it comes back.
  window.addEventListener("pagehide", () => { if (feed) { feed.close(); feed = null; } });
  window.addEventListener("pageshow", (ev) => { if (ev.persisted) { load(); live(); } });

  $("history-close").addEventListener("click", () => $("history").close());
  $("q-appt").addEventListener("change", apptChanged);
  $("filters").addEventListener("submit", (ev) => { ev.preventDefault(); cursors = [null]; pageIndex = 0; load(); });
  $("prev-page").addEventListener("click", () => { if (pageIndex > 0) { pageIndex--; load(); } });
  $("next-page").addEventListener("click", () => { if (nextCursor) { cursors[pageIndex + 1] = nextCursor; pageIndex++; load(); } });
  E.onLang(() => { words(); load(); });

  (async () => {
    if (!(await E.openStaffPage(status))) return;
    live();
    document.body.dataset.ready = "1";
  })();
})();
