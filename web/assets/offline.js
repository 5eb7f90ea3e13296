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
      const abort = typeof AbortController === "function" ? new AbortController() : null;
      const timer = abort ? setTimeout(() => abort.abort(), 8000) : 0;
      const r = await fetch(URL_, { credentials: "same-origin", signal: abort ? abort.signal : undefined })
        .finally(() => clearTimeout(timer));
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

  // ---- checks before an entry is queued offline (the daemon's Validator, as far as the page can judge) ----
  // The messages are the daemon's (ProblemReason.swift), in the page language.
  const SAY = {
    zh: {
      required: (l) => `请填写${l}。`,
      controlCharacters: (l) => `${l}不能包含换行、制表符等控制字符，请删去。`,
      tooLong: (l, n) => `${l}最多 ${n} 个字符，请缩短。`,
      dateFormat: (l) => `${l}不是可识别的日期，请按 YYYY-MM-DD 填写，例如 1990-05-17。`,
      noSuchDate: (l) => `${l}：没有这一天，请检查月份和日期。`,
      dateTimeFormat: (l) => `${l}不是可识别的日期时间，请按 YYYY-MM-DD HH:mm 填写，例如 2025-03-09 14:30。`,
      noSuchTime: (l) => `${l}：时间无效，小时为 0–23，分钟为 0–59。`,
      before: (l, b) => `${l}不能早于 ${b}。`,
      after: (l, b) => `${l}不能晚于 ${b}。`,
      offInterval: (l, n) => `${l}的分钟数须是 ${n} 的倍数，请选择整 ${n} 分钟的时间。`,
      notACountry: (l) => `${l}不在国家列表中，请从列表中选择，或填写 ISO 代码（如 CN）。`,
      notAProvince: (l) => `${l}不在省份列表中，请从列表中选择（如 广东 或 440000）。`,
      notACity: (l) => `${l}不在城市列表中，请从所选省份的城市中选择。`,
      notAnOption: (l, labels) => `${l}只能是以下之一：${labels.join("、")}。`,
      notInProvince: (l, p) => `${l}不属于所选省份“${p}”，请选择该省份的城市或更改省份。`,
      provinceHasNoCities: (l, p) => `“${p}”没有下级城市，请将${l}留空。`,
      phoneCharacters: (l) => `${l}只能包含数字、空格、连字符、点、括号和开头的 +，例如 +86 138 0013 8000。`,
      phoneTooLong: (l) => `${l}位数太多，请检查号码。`,
      phoneTooShort: (l) => `${l}位数太少，请填写完整号码（座机连同区号）。`,
      emailFormat: (l) => `${l}不是有效的邮箱地址，请按 name@example.com 的格式填写。`,
      emailTooLong: (l) => `${l}过长：@ 前最多 64 字节，域名最多 255 字节，整个地址（国际化域名按 xn-- 形式计）最多 254 字节。`,
    },
    en: {
      required: (l) => `${l} is required; please fill it in.`,
      controlCharacters: (l) => `${l} must not contain control characters such as line breaks or tabs; remove them.`,
      tooLong: (l, n) => `${l} may have at most ${n} characters; shorten it.`,
      dateFormat: (l) => `${l} is not a date; write it as YYYY-MM-DD, e.g. 1990-05-17.`,
      noSuchDate: (l) => `${l} is not a day of the calendar; check the month and day.`,
      dateTimeFormat: (l) => `${l} is not a date and time; write it as YYYY-MM-DD HH:mm, e.g. 2025-03-09 14:30.`,
      noSuchTime: (l) => `${l} has no such time of day; hours go from 0 to 23 and minutes from 0 to 59.`,
      before: (l, b) => `${l} must not be before ${b}.`,
      after: (l, b) => `${l} must not be after ${b}.`,
      offInterval: (l, n) => `The minutes of ${l} must be a multiple of ${n}; pick a time on a ${n}-minute step.`,
      notACountry: (l) => `${l} is not a country of the list; pick one, or give its ISO code (e.g. CN).`,
      notAProvince: (l) => `${l} is not a province of the list; pick one (e.g. Guangdong or 440000).`,
      notACity: (l) => `${l} is not a city of the list; pick one of the chosen province's cities.`,
      notAnOption: (l, labels) => `${l} must be one of: ${labels.join(", ")}.`,
      notInProvince: (l, p) => `${l} is not in the chosen province (${p}); pick one of its cities or change the province.`,
      provinceHasNoCities: (l, p) => `${p} has no cities in the list; leave ${l} empty.`,
      phoneCharacters: (l) => `${l} may contain only digits, spaces, hyphens, dots, parentheses and a leading +, e.g. +86 138 0013 8000.`,
      phoneTooLong: (l) => `${l} has too many digits; check the number.`,
      phoneTooShort: (l) => `${l} is too short; give the full number (with the area code for a landline).`,
      emailFormat: (l) => `${l} is not a valid e-mail address; write it like name@example.com.`,
      emailTooLong: (l) => `${l} is too long: at most 64 bytes before the @, 255 in the domain and 254 in all (an internationalised domain counted in its xn-- form).`,
    },
  };

  const two = (n) => String(n).padStart(2, "0");
  const leap = (y) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const daysIn = (y, m) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  const utf8 = (s) => new TextEncoder().encode(s).length;

  /** A date or date-time typed as the page takes it offline (1990-05-17, 1990/5/17, 1990.5.17,
   *  19900517; with " 9:05" for date-times): {canon} or {reason}. */
  function readDate(text, withTime) {
    const m = /^(\d{4})(?:([-/.])(\d{1,2})\2(\d{1,2})|(\d{2})(\d{2}))(?:[ T](\d{1,2}):(\d{2})(:\d{2})?)?$/.exec(text.trim());
    if (!m || !!m[7] !== withTime) return { reason: withTime ? "dateTimeFormat" : "dateFormat" };
    const y = +m[1], mo = +(m[3] || m[5]), d = +(m[4] || m[6]);
    if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo)) return { reason: "noSuchDate" };
    if (!withTime) return { canon: `${m[1]}-${two(mo)}-${two(d)}` };
    const hh = +m[7], mm = +m[8];
    if (hh > 23 || mm > 59) return { reason: "noSuchTime" };
    if (m[9] && m[9] !== ":00") return { reason: "noSuchTime" };
    return { canon: `${m[1]}-${two(mo)}-${two(d)} ${two(hh)}:${two(mm)}`, minute: mm };
  }

  const isControl = (c) => { const n = c.codePointAt(0); return n < 0x20 || (n >= 0x7f && n <= 0x9f) || n === 0x2028 || n === 0x2029; };

  function characters(text) {
    if (typeof Intl !== "undefined" && Intl.Segmenter) return [...new Intl.Segmenter().segment(text)].length;
    return [...text].length;
  }

  /** The problems of `values` (field name → text) for `theForm` that the page can judge
   *  without the daemon, as Check's problems ({field, code, message}): required fields
   *  (required-when, a city whose province has cities), picker rows, real dates and
   *  times, bounds and minute steps, text length and control characters, the shape of
   *  phone numbers and e-mail addresses (picker rows only once the data is loaded). What only the
   *  daemon judges (a phone number's plan, a domain's IDNA) is judged when it is sent. */
  function check(theForm, values, lang) {
    const say = SAY[lang] || SAY.en;
    const problems = [];
    const byName = Object.fromEntries(theForm.fields.map((f) => [f.name, f]));
    const v = (n) => (values[n] || "").trim();
    const rowsOf = (f) => (data && ((data.options[lang] || {})[theForm.name] || {})[f.name]) || null;
    const conditionHolds = (f) => {
      if (!f.requiredWhen) return null;
      const i = f.requiredWhen.indexOf("=");
      return i > 0 && v(f.requiredWhen.slice(0, i)) === f.requiredWhen.slice(i + 1);
    };
    const shown = (f) => {
      if (f.parent && byName[f.parent] && !shown(byName[f.parent])) return false;
      const c = conditionHolds(f);
      return c === null || c;
    };
    const add = (f, code, reason, ...args) => problems.push({ field: f.name, code, message: say[reason](f.label, ...args) });
    for (const f of theForm.fields) {
      if (!shown(f)) continue;
      const text = v(f.name);
      if (!text) {
        let required = f.required || conditionHolds(f) === true;
        if (f.type === "city" && f.parent && v(f.parent)) {
          const rows = rowsOf(f);
          required = required || (!!rows && rows.some((r) => r.parent === v(f.parent)));
        }
        if (required) add(f, "required", "required");
        continue;
      }
      switch (f.type) {
        case "text":
          if ([...text].some(isControl)) add(f, "invalid-format", "controlCharacters");
          else if (f.maxLength && characters(text.normalize("NFC")) > f.maxLength) add(f, "too-long", "tooLong", f.maxLength);
          break;
        case "date": case "datetime": {
          const withTime = f.type === "datetime";
          const r = readDate(text, withTime);
          if (r.reason) { add(f, "invalid-format", r.reason); break; }
          if (f.min && r.canon < f.min) add(f, "out-of-range", "before", f.min);
          else if (f.max && r.canon > f.max) add(f, "out-of-range", "after", f.max);
          else if (withTime && f.minuteInterval > 1 && r.minute % f.minuteInterval) add(f, "not-on-interval", "offInterval", f.minuteInterval);
          break;
        }
        case "country": case "province": case "city": case "choice": {
          const rows = rowsOf(f);
          if (!rows) break;
          const row = rows.find((x) => x.value === text);
          if (!row) {
            if (f.type === "choice") add(f, "not-in-list", "notAnOption", rows.map((x) => x.label));
            else add(f, "not-in-list", { country: "notACountry", province: "notAProvince", city: "notACity" }[f.type]);
            break;
          }
          if (f.type === "city" && f.parent && v(f.parent) && row.parent !== v(f.parent)) {
            const provinces = rowsOf(byName[f.parent]) || [];
            const p = provinces.find((x) => x.value === v(f.parent));
            const name = p ? p.label : v(f.parent);
            if (rows.some((x) => x.parent === v(f.parent))) add(f, "parent-mismatch", "notInProvince", name);
            else add(f, "parent-mismatch", "provinceHasNoCities", name);
          }
          break;
        }
        case "phone": {
          const digits = text.replace(/\D/g, "").length;
          if (!/^\+?[0-9 \-.()]+$/.test(text)) add(f, "invalid-format", "phoneCharacters");
          else if (digits > 17) add(f, "invalid-format", "phoneTooLong");
          else if (digits < 3) add(f, "invalid-format", "phoneTooShort");
          break;
        }
        case "email": {
          const at = text.lastIndexOf("@");
          if (at < 1 || at === text.length - 1 || /[\s"<>,;\\]/.test(text) || text.indexOf("@") !== at
            || !/^[^.].*[^.]$/.test(text.slice(at + 1)) || text.slice(at + 1).includes("..")) add(f, "invalid-format", "emailFormat");
          else if (utf8(text.slice(0, at)) > 64 || utf8(text) > 254 * 4) add(f, "invalid-format", "emailTooLong");
          break;
        }
        default: break;
      }
    }
    return problems;
  }

  return { load, form, search, matchKey, check, get data() { return data; } };
})();
