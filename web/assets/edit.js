/* exported EntrydEdit */
/* global Entryd */
// Editing a stored entry (issue 33): /?edit=ID opens the entry in the form
// page (form.js: the same fields, pickers, keys and Check as a new entry).
// The form is filled with the entry's values (Entries.Get); Done sends
// Entries.Update with the changed fields only ("" clears one) and ifVersion,
// the version read, as `entryctl edit` does. When the entry changed
// meanwhile (VersionMismatch), the current entry is read: a field only this
// user changed keeps this user's value, a field only the other side changed
// takes theirs, and for a field both changed the page shows both values and
// the user chooses. Delete (with a reason, confirmed) and Restore are here
// too. Only write and admin sessions may change entries: others are told so,
// and a submit (kiosk) session never reads one.
"use strict";

const EntrydEdit = (() => {
  const E = Entryd, h = E.h;
  const params = new URLSearchParams(location.search);
  const ID = params.get("edit");
  if (!ID) return null;

  const W = {
    zh: {
      heading: (n) => (n ? `编辑条目：${n}` : "编辑条目"), pageTitle: (t) => `编辑 · ${t} · entryd`,
      meta: (by, at) => `最后修改：${by}，${at}`, back: "返回条目列表", toForm: "返回登记表",
      save: "保存", loading: "正在加载条目…", saving: "正在保存…", nothing: "没有修改，没有保存任何内容。",
      saved: "已保存。", savedHeading: "已保存的修改", cleared: "（已清空）", empty: "（未填）",
      fix: "请修正标出的问题后再保存；没有保存任何内容。",
      refusedSubmit: "这个账号只能提交新的登记，不能查看或修改已存的条目。请用工作人员账号登录。",
      refusedRead: "你的账号只能查看条目，不能修改。", refusedHeading: "不能编辑这个条目",
      notFound: "找不到这个条目（可能从未存在，或已被清除）。",
      deleted: "此条目已删除。恢复后才能修改。", deletedDone: "已删除。", restored: "已恢复，可以修改了。",
      del: "删除…", restore: "恢复", delTitle: "删除这个条目？", delReason: "原因（可不填）",
      delConfirm: "确认删除", cancel: "取消",
      delHint: "删除后条目不再出现在列表中（勾选“含已删除”仍可看到），可以恢复。",
      delChanged: "条目刚被他人修改：请查看当前内容后再删除。没有删除任何内容。",
      conflictHeading: "保存前，条目已被他人修改",
      conflictText: (by) => `${by || "他人"} 在你编辑期间修改了下列字段，你也修改了它们：请逐项选择要保留的值，然后再保存。你修改的其他字段会保留，只有对方修改的字段已更新为对方的值。`,
      yours: "你的：", theirs: "对方的：", saveChoices: "按所选保存",
      choose: "请为每个冲突字段选择要保留的值，然后再保存。",
      merged: "条目在你编辑期间被他人修改了其他字段；你的修改已和对方的合并。",
      gone: "条目在你编辑期间被删除了，没有保存任何内容。",
      otherForm: "这个条目属于另一个表单，正在打开它…",
    },
    en: {
      heading: (n) => (n ? `Edit entry: ${n}` : "Edit entry"), pageTitle: (t) => `Edit · ${t} · entryd`,
      meta: (by, at) => `Last changed by ${by}, ${at}`, back: "Back to the entries", toForm: "Back to the form",
      save: "Save", loading: "Loading the entry…", saving: "Saving…", nothing: "Nothing changed; nothing was saved.",
      saved: "Saved.", savedHeading: "Saved changes", cleared: "(cleared)", empty: "(empty)",
      fix: "Please fix the marked problems, then save again; nothing was saved.",
      refusedSubmit: "This account can only submit new registrations; it cannot open or change stored entries. Log in with a staff account.",
      refusedRead: "Your account may view entries but not change them.", refusedHeading: "This entry cannot be edited here",
      notFound: "There is no such entry (it never existed, or it was erased).",
      deleted: "This entry is deleted. Restore it to change it.", deletedDone: "Deleted.", restored: "Restored: it can be changed again.",
      del: "Delete…", restore: "Restore", delTitle: "Delete this entry?", delReason: "Reason (optional)",
      delConfirm: "Delete", cancel: "Cancel",
      delHint: "A deleted entry leaves the list (\"Include deleted\" still shows it) and can be restored.",
      delChanged: "Someone just changed this entry: look at it again, then delete. Nothing was deleted.",
      conflictHeading: "Someone changed this entry while you were editing",
      conflictText: (by) => `${by || "Someone"} changed these fields while you were editing, and you changed them too: choose the value to keep for each, then save. Your other changes are kept; fields only they changed now show their values.`,
      yours: "Yours: ", theirs: "Theirs: ", saveChoices: "Save with these choices",
      choose: "Choose the value to keep for each conflicting field, then save.",
      merged: "Someone changed other fields of this entry while you were editing; your changes were saved with theirs.",
      gone: "The entry was deleted while you were editing; nothing was saved.",
      otherForm: "This entry belongs to another form; opening it…",
    },
  };
  const w = () => W[E.lang];
  const $ = (id) => document.getElementById(id);

  let form = null;       // form.js's editing interface
  let entry = null;      // the entry as last read or stored
  let original = {};     // its canonical values: what "changed" is measured against
  let conflicts = [];    // [{name, yours, yoursShown, theirs, theirsShown, choice}]
  let conflictBy = "";
  let saving = false, writable = false, refusal = null, savedSummary = null;

  const labelOf = (name) => { const f = form && form.form.fields.find((x) => x.name === name); return f ? f.label : name; };
  const status = (kind, text) => form.setStatus(kind, text);
  const when = (t) => (t || "").replace("T", " ").slice(0, 16);

  // ---- the page's parts (beside the form of form.js) ----
  function build() {
    const main = $("main");
    const bar = h("section", { id: "edit", class: "edit card", "aria-labelledby": "edit-title" },
      h("h2", { id: "edit-title", tabindex: "-1" }),
      h("p", { id: "edit-meta", class: "who" }),
      h("div", { id: "edit-deleted", class: "status bad", tabindex: "-1", hidden: true }),
      h("div", { class: "edit-actions" },
        h("a", { href: "/list", id: "edit-back", class: "btn" }),
        h("button", { type: "button", class: "btn danger", id: "edit-delete", hidden: true, onclick: openDelete }),
        h("button", { type: "button", class: "btn primary", id: "edit-restore", hidden: true, onclick: restore })));
    const saved = h("section", { id: "edit-saved", class: "edit-saved card", "aria-labelledby": "edit-saved-title", hidden: true },
      h("h2", { id: "edit-saved-title", tabindex: "-1" }), h("dl", { id: "edit-saved-list" }),
      h("a", { href: "/list", id: "edit-saved-back", class: "btn" }));
    const conflict = h("section", { id: "edit-conflict", class: "edit-conflict card", "aria-labelledby": "edit-conflict-title", hidden: true },
      h("h2", { id: "edit-conflict-title", tabindex: "-1" }), h("p", { id: "edit-conflict-text" }),
      h("div", { id: "edit-conflict-fields" }),
      h("button", { type: "button", class: "btn primary", id: "edit-conflict-save", onclick: () => save() }));
    const dlg = h("dialog", { id: "edit-delete-dlg", "aria-labelledby": "edit-delete-title", "aria-describedby": "edit-delete-hint" },
      h("h2", { id: "edit-delete-title" }), h("p", { id: "edit-delete-hint", class: "hint" }),
      h("label", { class: "edit-reason" }, h("span", { id: "edit-reason-label" }), h("input", { id: "edit-reason", type: "text", autocomplete: "off", maxlength: "500" })),
      h("div", { class: "edit-actions" },
        h("button", { type: "button", class: "btn", id: "edit-delete-cancel", onclick: () => $("edit-delete-dlg").close() }),
        h("button", { type: "button", class: "btn danger", id: "edit-delete-confirm", onclick: confirmDelete })));
    main.insertBefore(bar, $("queue"));
    $("status").after(conflict, saved);
    main.append(dlg);
    const here = document.querySelector('#nav a[aria-current="page"]');
    if (here) here.removeAttribute("aria-current"); // this page is no longer the new-entry form
  }

  /** The words of the page's parts in the page language (also after a switch). */
  function words() {
    if (!$("edit")) return;
    const name = entry && ((entry.display || {}).name || (entry.fields || {}).name);
    $("edit-title").textContent = refusal ? w().refusedHeading : w().heading(name);
    document.title = w().pageTitle(form && form.form ? form.form.title : "entryd");
    $("edit-meta").textContent = entry ? w().meta(entry.updatedBy || entry.createdBy || "", when(entry.updatedAt || entry.createdAt)) : "";
    const back = $("edit-back");
    if (refusal === "submit") { back.textContent = w().toForm; back.href = "/"; } else { back.textContent = w().back; back.href = "/list"; }
    $("done").textContent = w().save; // Done stores the changes (Update)
    $("edit-delete").textContent = w().del;
    $("edit-restore").textContent = w().restore;
    $("edit-deleted").textContent = w().deleted;
    $("edit-saved-title").textContent = w().savedHeading;
    $("edit-saved-back").textContent = w().back;
    $("edit-conflict-title").textContent = w().conflictHeading;
    $("edit-conflict-text").textContent = w().conflictText(conflictBy);
    $("edit-conflict-save").textContent = w().saveChoices;
    $("edit-delete-title").textContent = w().delTitle;
    $("edit-delete-hint").textContent = w().delHint;
    $("edit-reason-label").textContent = w().delReason;
    $("edit-delete-cancel").textContent = w().cancel;
    $("edit-delete-confirm").textContent = w().delConfirm;
    if (refusal) $("edit-refused").textContent = refusal === "submit" ? w().refusedSubmit : refusal === "read" ? w().refusedRead : w().notFound;
    drawConflicts();
    drawSaved();
  }

  /** Hides the form and says why it cannot be used here. */
  function refuse(kind) {
    refusal = kind;
    $("form").hidden = true;
    $("toolbar").hidden = true;
    $("keys").hidden = true;
    $("edit-delete").hidden = true;
    $("edit-restore").hidden = true;
    if (!$("edit-refused")) $("edit-meta").after(h("p", { id: "edit-refused", role: "alert" }));
    words();
    $("edit-back").focus();
  }

  // ---- loading ----
  /** `e` becomes the entry edited: its values are what changes are measured against. */
  function loaded(e) {
    entry = e;
    original = { ...(e.fields || {}) };
  }

  /** The form (and the buttons) as the entry's state allows: a deleted entry is shown, not edited. */
  function drawState() {
    const deleted = !!entry.deleted;
    $("edit-deleted").hidden = !deleted;
    $("edit-delete").hidden = deleted || !writable;
    $("edit-restore").hidden = !deleted || !writable;
    $("form").inert = deleted;
    $("form").classList.toggle("inert", deleted);
    $("toolbar").hidden = deleted;
    $("keys").hidden = deleted;
    words();
  }

  async function start(api, session) {
    form = api;
    build();
    const role = session && session.role;
    writable = role === "write" || role === "admin";
    if (params.get("kiosk") === "1" || role === "submit" || role === "none") { refuse("submit"); return; }
    if (session && !writable) { refuse("read"); return; }
    status("info", w().loading);
    let e;
    try {
      e = (await E.call("io.entryd.Entries.Get", { id: ID, locale: E.lang }, { redirect: false })).entry;
    } catch (err) {
      if (err.is && (err.is("EntryNotFound") || err.is("EntryErased"))) { status("", ""); refuse("missing"); return; }
      if (err.status === 401) { E.toLogin(); return; }
      if (err.status === 403) { status("", ""); refuse("read"); return; }
      status("bad", E.describe(err));
      $("form").hidden = true;
      $("toolbar").hidden = true;
      words();
      return;
    }
    if ((e.form || "") !== (form.form.name || "")) {
      // the page was opened with another form than the entry's: open the entry's
      status("info", w().otherForm);
      const next = new URLSearchParams(location.search);
      next.set("form", e.form);
      location.replace("/?" + next.toString());
      return;
    }
    loaded(e);
    form.fill(e.fields || {}, e.display || {});
    status("", "");
    drawState();
  }

  // ---- saving ----
  /** The fields whose value differs from the entry's (a hidden field that had a value: ""), as entryctl edit sends. */
  function changes() {
    const v = form.values(), out = {};
    for (const f of form.form.fields) {
      const now = form.isShown(f.name) ? v[f.name] || "" : "";
      if (now !== (original[f.name] || "")) out[f.name] = now;
    }
    return out;
  }

  async function save(merging) {
    if (saving || !entry || entry.deleted || !writable) return;
    const open = conflicts.find((c) => !c.choice);
    if (open) {
      status("bad", w().choose);
      const first = document.querySelector(`#edit-conflict-fields input[name="cf-${open.name}"]`);
      if (first) first.focus();
      return;
    }
    const fields = changes();
    if (!Object.keys(fields).length) {
      conflicts = [];
      drawConflicts();
      status("info", w().nothing);
      return;
    }
    const shownBefore = {};
    for (const k of Object.keys(fields)) shownBefore[k] = fields[k] ? form.shown(k) || fields[k] : "";
    saving = true;
    form.busy(true);
    $("edit-saved").hidden = true;
    status("info", w().saving);
    let retry = false;
    try {
      const r = await E.call("io.entryd.Entries.Update", { id: ID, fields, ifVersion: entry.version, locale: E.lang });
      loaded(r.entry);
      form.fill(r.entry.fields || {}, r.entry.display || {});
      conflicts = [];
      drawConflicts();
      savedSummary = Object.keys(fields).map((k) => ({ name: k, value: fields[k], shown: (r.entry.display || {})[k] || shownBefore[k] }));
      drawState();
      status("ok", merging ? `${w().saved} ${w().merged}` : w().saved);
      $("edit-saved").hidden = false;
      $("edit-saved-title").focus();
    } catch (err) {
      if (err.is && err.is("VersionMismatch")) retry = await conflict(fields, shownBefore);
      else if (err.is && err.is("ValidationFailed")) form.showProblems(err.parameters.problems || [], w().fix);
      else if (err.is && (err.is("EntryNotFound") || err.is("EntryErased"))) { status("", ""); refuse("missing"); }
      else status("bad", E.describe(err));
    } finally {
      saving = false;
      form.busy(false);
    }
    if (retry) await save(true);
  }

  /** After VersionMismatch: the current entry read; true when no field conflicts (save again at once). */
  async function conflict(fields, shownBefore) {
    let cur;
    try {
      cur = (await E.call("io.entryd.Entries.Get", { id: ID, locale: E.lang })).entry;
    } catch (err) {
      status("bad", E.describe(err));
      return false;
    }
    // this user's values as people read them (a phone typed a moment ago has no display form yet)
    const v = form.values(), checked = {};
    for (const f of form.form.fields) if (form.isShown(f.name) && v[f.name]) checked[f.name] = v[f.name];
    try {
      const r = await E.call("io.entryd.Forms.Check", { form: form.form.name, fields: checked, locale: E.lang });
      for (const k of Object.keys(fields)) if (fields[k] && (r.display || {})[k]) shownBefore[k] = r.display[k];
    } catch (err) { /* the values as typed */ }
    const theirs = cur.fields || {}, theirsShown = cur.display || {};
    const found = [];
    for (const [k, v] of Object.entries(fields)) {
      const t = theirs[k] || "";
      if (t !== (original[k] || "") && t !== v) {
        found.push({ name: k, yours: v, yoursShown: v ? shownBefore[k] : "", theirs: t, theirsShown: t ? theirsShown[k] || t : "", choice: null });
      }
    }
    // the form now starts from the stored entry: what only they changed shows,
    // what this user changed stays (a conflicting field too, until chosen)
    const values = { ...theirs }, display = { ...theirsShown };
    for (const [k, v] of Object.entries(fields)) {
      values[k] = v;
      if (v && shownBefore[k]) display[k] = shownBefore[k]; else delete display[k];
    }
    loaded(cur);
    form.fill(values, display);
    if (cur.deleted) {
      conflicts = [];
      drawConflicts();
      drawState();
      status("bad", w().gone);
      $("edit-deleted").focus();
      return false;
    }
    drawState();
    if (!found.length) return true;
    conflicts = found;
    conflictBy = cur.updatedBy || "";
    drawConflicts();
    status("bad", w().choose);
    $("edit-conflict-title").focus();
    return false;
  }

  function drawConflicts() {
    const box = $("edit-conflict");
    if (!box) return;
    box.hidden = !conflicts.length;
    $("edit-conflict-text").textContent = w().conflictText(conflictBy);
    const shown = (text) => text || w().empty;
    $("edit-conflict-fields").replaceChildren(...conflicts.map((c) => {
      const radio = (which, words, text) => h("label", { class: "choice" },
        h("input", { type: "radio", name: `cf-${c.name}`, value: which, "data-field": c.name, checked: c.choice === which,
          onchange: () => choose(c, which) }),
        h("span", {}, words, h("bdi", { class: "emoji-capable" }, shown(text))));
      return h("fieldset", { class: "conflict", "data-field": c.name },
        h("legend", {}, labelOf(c.name)),
        radio("yours", w().yours, c.yoursShown), radio("theirs", w().theirs, c.theirsShown));
    }));
  }

  function choose(c, which) {
    c.choice = which;
    form.set(c.name, which === "yours" ? c.yours : c.theirs, which === "yours" ? c.yoursShown : c.theirsShown);
  }

  function drawSaved() {
    const list = $("edit-saved-list");
    if (!list || !savedSummary) return;
    list.replaceChildren(...savedSummary.flatMap((s) => [h("dt", { "data-field": s.name }, labelOf(s.name)),
      h("dd", { "data-field": s.name }, s.value ? s.shown : w().cleared)]));
  }

  // ---- delete and restore ----
  function openDelete() {
    $("edit-reason").value = "";
    $("edit-delete-dlg").showModal();
    $("edit-reason").focus();
  }

  async function confirmDelete() {
    const reason = $("edit-reason").value.trim();
    $("edit-delete-dlg").close();
    try {
      const r = await E.call("io.entryd.Entries.Delete", { id: ID, ifVersion: entry.version, reason: reason || null, locale: E.lang });
      loaded(r.entry);
      drawState();
      status("ok", w().deletedDone);
      $("edit-saved").hidden = true;
      $("edit-deleted").focus();
    } catch (err) {
      if (err.is && err.is("VersionMismatch")) {
        try {
          const cur = (await E.call("io.entryd.Entries.Get", { id: ID, locale: E.lang })).entry;
          loaded(cur);
          form.fill(cur.fields || {}, cur.display || {});
          drawState();
        } catch (e) { /* the sentence below says enough */ }
        status("bad", w().delChanged);
      } else {
        status("bad", E.describe(err));
      }
      $("edit-delete").focus();
    }
  }

  async function restore() {
    try {
      const r = await E.call("io.entryd.Entries.Restore", { id: ID, locale: E.lang });
      loaded(r.entry);
      form.fill(r.entry.fields || {}, r.entry.display || {});
      drawState();
      status("ok", w().restored);
      $("edit-delete").focus();
    } catch (err) {
      status("bad", E.describe(err));
    }
  }

  /** After a language switch: the values of the conflict and of the saved
   *  panels as people read them in the new language (Check's display). */
  async function relabel() {
    if (!form || (!conflicts.length && !savedSummary)) return;
    const lang = E.lang;
    const ask = (fields) => E.call("io.entryd.Forms.Check", { form: form.form.name, fields, locale: lang })
      .then((r) => r.display || {}, () => ({}));
    const v = form.values(), mine = {};
    for (const f of form.form.fields) if (form.isShown(f.name) && v[f.name]) mine[f.name] = v[f.name];
    for (const c of conflicts) { if (c.yours) mine[c.name] = c.yours; else delete mine[c.name]; }
    const [yours, stored] = await Promise.all([ask(mine), ask(original)]);
    if (lang !== E.lang) return;
    for (const c of conflicts) {
      if (c.yours && yours[c.name]) c.yoursShown = yours[c.name];
      if (c.theirs && stored[c.name]) c.theirsShown = stored[c.name];
    }
    if (savedSummary && !conflicts.length) for (const x of savedSummary) if (x.value && stored[x.name]) x.shown = stored[x.name];
    drawConflicts();
    drawSaved();
  }

  E.onLang(() => words());
  return { start, save: () => save(false), words: () => { words(); relabel(); } };
})();
window.EntrydEdit = EntrydEdit;
