/* exported Offline */
// The form's data for offline use (issue 32): GET /api/v1/offline, which
// entryd-web builds from entryd's answers (forms, every picker's rows, the keys
// Options ranks them by, the Traditional → Simplified folds), kept by the
// service worker (sw.js) so that the page has it after a reload offline.
// search() ranks rows exactly as io.entryd.Forms.Options does
// (SearchRanking, MatchKey in Sources/EntryModel): the same rows in the same
// order, online or not. Reference rows and form definitions only, never an entry.
"use strict";

const Offline = (() => {
  const URL_ = "/api/v1/offline";
  let data = null;
  let loading = null;

  async function fetchData() {
    try {
      const r = await fetch(URL_, { credentials: "same-origin" });
      if (r.ok) return await r.json();
    } catch (e) { /* offline: the service worker's copy below, if it did not answer already */ }
    try {
      if (window.caches) {
        const cached = await caches.match(URL_);
        if (cached) return await cached.json();
      }
    } catch (e) { /* no cache */ }
    return null;
  }

  /** The data (loaded once a page; null when neither the server nor the cache has it). */
  function load(again) {
    if (!loading || again) {
      loading = fetchData().then((d) => { if (d) data = d; return data; });
    }
    return loading;
  }

  const SEPARATORS = new Set(["-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "'", "\u2018", "\u2019", "`", ".", ",", "_", "(", ")"]);
  const DROPPED = /[\p{Mn}\p{Cf}\s\u0085]/u;

  /** MatchKey (Sources/EntryModel/Reference/MatchKey.swift): full-width folded, marks and
   *  separators dropped, lower-cased, Traditional characters folded to Simplified. */
  function matchKey(input) {
    const wide = String(input).replace(/[\uFF01-\uFF5E]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0)).replace(/\u3000/g, " ");
    let out = "";
    for (const ch of wide.normalize("NFD")) if (!DROPPED.test(ch) && !SEPARATORS.has(ch)) out += ch;
    out = out.toLowerCase();
    if (data && data.fold && /\p{Ideographic}/u.test(out)) out = [...out].map((c) => data.fold[c] || c).join("");
    return out;
  }

  // SearchRanking.rank: 0 exact, 1 prefix (or the initials whole), 2 a later word's start (or the initials' prefix), 3 inside.
  function rank(key, q, qs, insideAllowed) {
    const [text, starts, initials] = key;
    if (initials) return text === q ? 1 : text.startsWith(q) ? 2 : -1;
    if (text === q) return 0;
    if (text.startsWith(q)) return 1;
    if (starts.length > 1) {
      const cps = [...text];
      for (let i = 1; i < starts.length; i++) {
        const s = starts[i];
        if (s + qs.length <= cps.length && qs.every((c, j) => cps[s + j] === c)) return 2;
      }
    }
    if (insideAllowed && text.includes(q)) return 3;
    return -1;
  }

  /** The form (GetForm's reply) in `lang`: `name`, else the default; null when unknown. */
  function form(name, lang) {
    if (!data) return null;
    const forms = data.forms[lang] || {};
    return forms[name || data.default] || null;
  }

  /** Options(form, field, parent, query, limit) from the data: null when the data lacks the field. */
  function search(formName, field, parent, query, lang, limit) {
    if (!data) return null;
    const name = formName || data.default;
    const all = ((data.options[lang] || {})[name] || {})[field];
    if (!all) return null;
    const keys = (data.keys[name] || {})[field] || {};
    let rows = parent ? all.filter((r) => r.parent === parent) : all;
    const q = matchKey(query || "");
    if (q) {
      const qs = [...q];
      const insideAllowed = qs.length >= 3 || !/^[a-z]*$/.test(q);
      const ranked = [];
      rows.forEach((row, i) => {
        let best = -1;
        for (const k of keys[row.value] || []) {
          const r = rank(k, q, qs, insideAllowed);
          if (r >= 0 && (best < 0 || r < best)) best = r;
        }
        if (best >= 0) ranked.push([best, i]);
      });
      ranked.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      rows = ranked.map(([, i]) => rows[i]);
    }
    return limit ? rows.slice(0, limit) : rows.slice();
  }

  return { load, form, search, matchKey, get data() { return data; } };
})();
