/* global Entryd */
// The conflicts page (admin role): Sync.ListConflicts, and Resolve keeping the
// current value or writing the lost one back.
"use strict";

(() => {
  const E = Entryd, h = E.h;
  const W = {
    zh: {
      title: "冲突 · entryd", resolved: "含已解决", "c-entry": "条目", "c-field": "字段", "c-kept": "保留的值", "c-lost": "落败的值",
      "c-at": "发现时间", "c-action": "处理", keep: "保留当前值", useLost: "改用落败的值", done: "已解决",
      count: (n) => `${n} 个冲突`, adminOnly: "冲突只由管理员处理：你的账号没有管理员权限。", none: "没有待处理的冲突。", ok: "冲突已解决。", empty: "（空）",
      deletedField: "删除状态", isDeleted: "已删除", notDeleted: "未删除", nowDeleted: "当前已删除", born: (d) => `生日 ${d}`,
      side: (at, node) => `${at} 写入 · 节点 …${node}`, sep: "，",
    },
    en: {
      title: "Conflicts · entryd", resolved: "Include resolved", "c-entry": "Entry", "c-field": "Field", "c-kept": "Kept value", "c-lost": "Lost value",
      "c-at": "Detected", "c-action": "Action", keep: "Keep current", useLost: "Use lost value", done: "Resolved",
      count: (n) => `${n} conflict${n === 1 ? "" : "s"}`, adminOnly: "Conflicts are handled by administrators; your account is not one.", none: "No conflicts to handle.", ok: "The conflict is resolved.", empty: "(empty)",
      deletedField: "Deleted", isDeleted: "deleted", notDeleted: "not deleted", nowDeleted: "now deleted", born: (d) => `born ${d}`,
      side: (at, node) => `written ${at} · node …${node}`, sep: ", ",
    },
  };
  const w = () => W[E.lang];
  const $ = (id) => document.getElementById(id);

  function status(kind, text) { const s = $("status"); s.className = "status " + kind; s.textContent = text || ""; }

  function words() {
    document.title = w().title;
    document.querySelectorAll("[data-l]").forEach((el) => { el.textContent = w()[el.dataset.l]; });
  }

  const pad = (n) => String(n).padStart(2, "0");
  /** The local time an HLC (16 hex digits: 48 bits of milliseconds, 16 of counter) carries. */
  function hlcTime(hlc) {
    if (!/^[0-9a-f]{16}$/i.test(hlc || "")) return "";
    const d = new Date(parseInt(hlc.slice(0, 12), 16));
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  /** Who and what each conflict is about, read with existing calls: Get and
   *  GetForm once per entry and form, Check for a value that is not the
   *  entry's current one (its display form). A call that fails leaves ids. */
  async function people(list) {
    const lang = E.lang, entries = {}, forms = {};
    const quiet = (p) => p.catch(() => null);
    await Promise.all([...new Set(list.map((c) => c.entry))].map(async (id) => {
      const r = await quiet(E.call("io.entryd.Entries.Get", { id, locale: lang }));
      entries[id] = r && r.entry;
    }));
    await Promise.all([...new Set(Object.values(entries).filter(Boolean).map((e) => e.form))].map(async (name) => {
      const r = await quiet(E.call("io.entryd.Forms.GetForm", { name, locale: lang }));
      forms[name] = r && r.form;
    }));
    async function shown(entry, field, value) {
      if (field === "deleted") return value === "true" ? w().isDeleted : w().notDeleted;
      if (!value) return w().empty;
      if (!entry) return value;
      if (entry.fields[field] === value && entry.display && entry.display[field]) return entry.display[field];
      const r = await quiet(E.call("io.entryd.Forms.Check", { form: entry.form, fields: { [field]: value }, locale: lang }));
      return (r && r.display && r.display[field]) || value;
    }
    return Promise.all(list.map(async (c) => {
      const entry = entries[c.entry], form = entry && forms[entry.form];
      const def = form && form.fields.find((f) => f.name === c.field);
      const who = [];
      if (entry) {
        const name = (entry.display && entry.display.name) || entry.fields.name;
        if (name) who.push(name);
        if (entry.fields.birthday) who.push(w().born(entry.fields.birthday));
        if (form && form.title) who.push(form.title);
        if (entry.deleted) who.push(w().nowDeleted);
      }
      return { c, who: who.join(w().sep), field: c.field === "deleted" ? w().deletedField : (def && def.label) || c.field,
        kept: await shown(entry, c.field, c.kept), lost: await shown(entry, c.field, c.lost) };
    }));
  }

  const side = (value, hlc, node) => [h("span", {}, value), h("br"),
    h("span", { class: "sub" }, w().side(hlcTime(hlc), (node || "").slice(-8)))];

  async function load() {
    const admin = !!E.session && E.session.role === "admin";
    $("admin-filters").hidden = !admin; // nothing of the list for others: the message says why
    $("admin-table").hidden = !admin;
    if (!admin) { status("bad", w().adminOnly); return; }
    try {
      const r = await E.call("io.entryd.Sync.ListConflicts", { includeResolved: $("resolved").checked });
      const list = r.conflicts || [];
      const named = await people(list);
      $("caption").textContent = w().count(list.length);
      if (!list.length) status("", w().none);
      $("rows").replaceChildren(...named.map(({ c, who, field, kept, lost }) => h("tr", { "data-id": c.id },
        h("td", {}, who ? [h("span", {}, who), h("br")] : [], h("code", { class: "sub" }, c.entry)),
        h("td", {}, field, h("br"), h("code", { class: "sub" }, c.field)),
        h("td", {}, side(kept, c.keptHlc, c.keptNode)), h("td", {}, side(lost, c.lostHlc, c.lostNode)),
        h("td", {}, (c.detectedAt || "").replace("T", " ").slice(0, 19)),
        h("td", { class: "actions" }, c.resolved ? w().done : [
          h("button", { type: "button", class: "btn", onclick: () => resolve(c, false) }, w().keep), " ",
          h("button", { type: "button", class: "btn", onclick: () => resolve(c, true) }, w().useLost)]))));
    } catch (err) {
      status("bad", E.describe(err));
    }
  }

  async function resolve(c, useLost) {
    try {
      await E.call("io.entryd.Sync.Resolve", { id: c.id, useLost });
      status("ok", w().ok);
    } catch (err) {
      status("bad", E.describe(err));
    }
    load();
  }

  $("resolved").addEventListener("change", load);
  E.onLang(() => { words(); load(); });
  (async () => {
    if (!(await E.openStaffPage(status))) return;
    document.body.dataset.ready = "1";
  })();
})();
