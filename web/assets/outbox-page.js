/* global Entryd, Outbox */
// The staff page of the outbox (/outbox, issue 32): the submissions this
// device kept offline that the server refused for good (set aside by the form
// page, outbox.js), for a logged-in user who may read. They never leave this
// browser: each can be opened in the form (/?fix=ID, same id) to be corrected
// and submitted, sent again as it is, or deleted. Waiting submissions are
// only counted. Never linked from the kiosk.
"use strict";

(() => {
  const E = Entryd, h = E.h;
  const W = {
    zh: {
      title: "被拒绝的离线提交 · entryd", heading: "被拒绝的离线提交",
      about: "这些提交保存在本设备的浏览器中，服务器拒绝了它们。请修正后重新提交，或删除。",
      "c-at": "存放时间", "c-user": "提交者", "c-values": "内容", "c-why": "拒绝原因", "c-action": "处理",
      fix: "在表单中修正", resend: "重新发送", remove: "删除", confirmRemove: "删除这份提交？内容将无法恢复。",
      count: (n) => `${n} 份被拒绝的提交`, none: "本设备没有被拒绝的离线提交。", waiting: (n) => `另有 ${n} 份提交等待发送。`,
      removed: "已删除。", requeued: "已放回待发送队列。", readOnly: "需要可读取条目的账号。",
      why: { 400: "内容有误", 403: "账号无权提交", 404: "表单不存在", 409: "与已有条目冲突", 413: "内容太大" },
    },
    en: {
      title: "Refused offline submissions · entryd", heading: "Refused offline submissions",
      about: "These submissions are kept in this device's browser; the server refused them. Fix and submit them again, or delete them.",
      "c-at": "Kept at", "c-user": "Submitted by", "c-values": "Values", "c-why": "Why refused", "c-action": "Action",
      fix: "Fix in the form", resend: "Send again", remove: "Delete", confirmRemove: "Delete this submission? Its values cannot be recovered.",
      count: (n) => `${n} refused submission${n === 1 ? "" : "s"}`, none: "No refused offline submissions on this device.",
      waiting: (n) => `${n} more waiting to be sent.`,
      removed: "Deleted.", requeued: "Back in the queue to be sent.", readOnly: "This needs an account that may read entries.",
      why: { 400: "invalid values", 403: "the account may not submit", 404: "no such form", 409: "conflicts with a stored entry", 413: "too large" },
    },
  };
  const w = () => W[E.lang];
  const $ = (id) => document.getElementById(id);
  const RANK = { read: 1, write: 2, admin: 3 };

  function status(kind, text) { const s = $("status"); s.className = "status " + kind; s.textContent = text || ""; }

  function words() {
    document.title = w().title;
    document.querySelectorAll("[data-l]").forEach((el) => { el.textContent = w()[el.dataset.l]; });
  }

  function why(r) {
    const problems = (r.problems || []).map((p) => p.message).filter(Boolean);
    const head = `${r.status} ${w().why[r.status] || ""}${r.error ? ` (${r.error.split(".").pop()})` : ""}`;
    return [h("div", {}, head), problems.length ? h("ul", {}, problems.map((m) => h("li", {}, m))) : null];
  }

  async function load() {
    const s = E.session;
    const may = !!s && (RANK[s.role] || 0) >= RANK.read;
    $("table").hidden = !may;
    if (!may) { status("bad", w().readOnly); return; }
    let items = [];
    try { items = await Outbox.all(); } catch (e) { items = []; }
    const refused = items.filter((i) => i.rejected);
    const waiting = items.length - refused.length;
    $("caption").textContent = w().count(refused.length);
    if (!refused.length) status("", w().none + (waiting ? " " + w().waiting(waiting) : ""));
    else if (waiting) status("", w().waiting(waiting));
    $("rows").replaceChildren(...refused.map((i) => h("tr", { "data-id": i.id },
      h("td", {}, (i.queuedAt || "").replace("T", " ").slice(0, 19)),
      h("td", {}, i.user || ""),
      h("td", {}, h("dl", { class: "values" }, Object.entries(i.fields || {}).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))),
      h("td", {}, why(i.rejected)),
      h("td", {},
        h("a", { class: "btn", href: `/?fix=${encodeURIComponent(i.id)}` + (i.form ? `&form=${encodeURIComponent(i.form)}` : "") }, w().fix), " ",
        h("button", { type: "button", class: "btn", "data-act": "resend", onclick: () => resend(i) }, w().resend), " ",
        h("button", { type: "button", class: "btn", "data-act": "remove", onclick: () => remove(i) }, w().remove)))));
  }

  async function resend(item) {
    const copy = { ...item };
    delete copy.rejected;
    if (E.session) copy.user = E.session.user; // sent under this login
    await Outbox.put(copy);
    status("ok", w().requeued);
  }

  async function remove(item) {
    if (!window.confirm(w().confirmRemove)) return;
    await Outbox.remove(item.id);
    status("ok", w().removed);
  }

  Outbox.onChange(() => load());
  E.onLang(() => { words(); load(); });
  (async () => {
    if (!(await E.openStaffPage(status))) return;
    document.body.dataset.ready = "1";
  })();
})();
