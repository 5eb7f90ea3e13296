/* global Entryd */
/* exported Duplicates */
// Possible duplicates (issue 33; doc/protocol.md "Possible duplicates"): when
// Check, as the person types, or Add, once stored, says that stored entries
// may be the same person, a polite panel names each (name, form, what
// matched) with a link to open it. It is a warning: Done still saves. entryd
// sends `duplicates` only to users who may read entries, so a kiosk (a
// submit session) never has one to show; the page does not show one in kiosk
// mode either (?kiosk=1: the public at the desk).
"use strict";

const Duplicates = (() => {
  const E = Entryd, h = E.h;
  const W = {
    zh: {
      title: "可能重复的登记",
      checking: "已有条目看起来是同一人。请先核对；如果确是新的登记，仍可点“完成”保存。",
      stored: "已保存。已有条目看起来是同一人，请核对是否重复登记：",
      open: (n) => `打开 ${n}`, unnamed: "（无姓名）", form: (f) => `（表单 ${f}）：`, sep: "、",
      matched: { "name-birthday": "姓名和生日相同", phone: "电话相同", email: "邮箱相同" },
    },
    en: {
      title: "Possible duplicates",
      checking: "Stored entries look like the same person. Please check first; if this is a new registration, Done still saves it.",
      stored: "Stored. Stored entries look like the same person; please check whether this one is registered twice:",
      open: (n) => `Open ${n}`, unnamed: "(no name)", form: (f) => ` (form ${f}): `, sep: ", ",
      matched: { "name-birthday": "same name and birthday", phone: "same phone", email: "same e-mail" },
    },
  };
  const w = () => W[E.lang] || W.zh;
  let shown = null; // { list, stored }: what the panel says, redrawn in the page language

  /** Where an entry opens: the form page in edit mode (/?edit=ID&form=FORM). */
  function href(d) {
    return "/?edit=" + encodeURIComponent(d.id) + (d.form ? "&form=" + encodeURIComponent(d.form) : "");
  }

  function draw() {
    const panel = document.getElementById("duplicates");
    if (!panel) return;
    if (!shown) { panel.replaceChildren(); return; }
    const name = (d) => d.name || w().unnamed;
    // Check's, while the person types: polite; after a stored Add: an alert.
    panel.setAttribute("role", shown.stored ? "alert" : "status");
    panel.replaceChildren(
      h("h2", { class: "dups-title" }, w().title),
      h("p", {}, shown.stored ? w().stored : w().checking),
      h("ul", { class: "dups-list" }, ...shown.list.map((d) => h("li", { "data-id": d.id },
        h("a", { href: href(d), "aria-label": w().open(name(d)) }, name(d)),
        w().form(d.form),
        (d.matched || []).map((m) => w().matched[m] || m).join(w().sep)))));
  }

  E.onLang(draw);

  return {
    /** Check's `duplicates` (absent: none). */
    fromCheck(list) {
      shown = list && list.length ? { list, stored: false } : null;
      draw();
    },
    /** Add's `duplicates`, after the entry is stored (absent: none). */
    fromAdd(list) {
      shown = list && list.length ? { list, stored: true } : null;
      draw();
    },
    /** Nothing to show (a reset form). */
    clear() {
      shown = null;
      draw();
    },
  };
})();
