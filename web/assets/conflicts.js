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
    },
    en: {
      title: "Conflicts · entryd", resolved: "Include resolved", "c-entry": "Entry", "c-field": "Field", "c-kept": "Kept value", "c-lost": "Lost value",
      "c-at": "Detected", "c-action": "Action", keep: "Keep current", useLost: "Use lost value", done: "Resolved",
      count: (n) => `${n} conflict${n === 1 ? "" : "s"}`, adminOnly: "Conflicts are handled by administrators; your account is not one.", none: "No conflicts to handle.", ok: "The conflict is resolved.", empty: "(empty)",
    },
  };
  const w = () => W[E.lang];
  const $ = (id) => document.getElementById(id);

  function status(kind, text) { const s = $("status"); s.className = "status " + kind; s.textContent = text || ""; }

  function words() {
    document.title = w().title;
    document.querySelectorAll("[data-l]").forEach((el) => { el.textContent = w()[el.dataset.l]; });
  }

  async function load() {
    const admin = !!E.session && E.session.role === "admin";
    $("admin-filters").hidden = !admin; // nothing of the list for others: the message says why
    $("admin-table").hidden = !admin;
    if (!admin) { status("bad", w().adminOnly); return; }
    try {
      const r = await E.call("io.entryd.Sync.ListConflicts", { includeResolved: $("resolved").checked });
      const list = r.conflicts || [];
      $("caption").textContent = w().count(list.length);
      if (!list.length) status("", w().none);
      $("rows").replaceChildren(...list.map((c) => h("tr", { "data-id": c.id },
        h("td", {}, h("code", {}, c.entry)), h("td", {}, c.field), h("td", {}, c.kept || w().empty), h("td", {}, c.lost || w().empty),
        h("td", {}, (c.detectedAt || "").replace("T", " ").slice(0, 19)),
        h("td", {}, c.resolved ? w().done : [
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
