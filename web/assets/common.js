/* exported Entryd */
// Shared by every page of entryd-web: the page language, the API call with
// the session's CSRF token, and small DOM helpers. Plain ES2017, no build step.
"use strict";

const Entryd = (() => {
  const WORDS = {
    zh: {
      form: "登记", list: "条目", conflicts: "冲突", login: "登录", logout: "退出",
      language: "语言", signedInAs: "已登录：", skip: "跳到主要内容",
      notLoggedIn: "请先登录。", forbidden: "你的账号没有这项操作的权限。",
      tooMany: (s) => `尝试太多次，请 ${s} 秒后再试。`, unreachable: "无法连接服务器，请稍后再试。",
      busy: "服务器暂时不可用，请稍后再试。", tooLarge: "内容太大。", failed: "操作失败：",
      headerTooLarge: "请求头太大（多半是本站的 Cookie 太多），请清除本站的 Cookie 后再试。",
      tooManyConnections: (s) => `连接太多，请 ${s} 秒后再试。`,
    },
    en: {
      form: "Registration", list: "Entries", conflicts: "Conflicts", login: "Log in", logout: "Log out",
      language: "Language", signedInAs: "Signed in as ", skip: "Skip to main content",
      notLoggedIn: "Please log in first.", forbidden: "Your account may not do this.",
      tooMany: (s) => `Too many attempts; try again in ${s} s.`, unreachable: "The server cannot be reached; try again later.",
      busy: "The server is busy; try again later.", tooLarge: "Too much data.", failed: "Failed: ",
      headerTooLarge: "The request headers are too large (most likely too many cookies for this site); clear them and try again.",
      tooManyConnections: (s) => `Too many connections; try again in ${s} s.`,
    },
  };

  /** The language the page is configured for, whatever was chosen since: ?lang=, else navigator.language
   *  (zh if it starts with zh). A kiosk starts in it and returns to it after a pause. */
  function defaultLang() {
    const q = new URLSearchParams(location.search).get("lang");
    if (q === "zh" || q === "en") return q;
    return (navigator.language || "zh").toLowerCase().startsWith("zh") ? "zh" : "en";
  }

  /** The page language: ?lang=, then the saved choice, then navigator.language (zh if it starts with zh). */
  function initialLang() {
    const q = new URLSearchParams(location.search).get("lang");
    if (q === "zh" || q === "en") return q;
    let saved = null;
    try { saved = localStorage.getItem("entryd.lang"); } catch (e) { /* storage off */ }
    if (saved === "zh" || saved === "en") return saved;
    return defaultLang();
  }

  let lang = initialLang();
  const listeners = [];

  function setLang(next) {
    lang = next;
    try { localStorage.setItem("entryd.lang", next); } catch (e) { /* storage off */ }
    document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
    document.querySelectorAll("[data-lang]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.lang === next)));
    document.querySelectorAll("[data-w]").forEach((el) => {
      const w = WORDS[next][el.dataset.w];
      if (typeof w === "string") el.textContent = w;
    });
    listeners.forEach((f) => f(next));
  }

  /** An API failure: HTTP status (0 = network), the error name and its parameters. */
  class ApiError extends Error {
    constructor(status, name, parameters) {
      super(name || `HTTP ${status}`);
      this.status = status;
      this.name = name || "";
      this.parameters = parameters || {};
    }
    /** Whether the request may succeed later unchanged (network, 503). */
    get transient() { return this.status === 0 || this.status === 502 || this.status === 503 || this.status === 504; }
    is(short) { return this.name === short || this.name.endsWith("." + short); }
  }

  let session = null;

  // The web user of the last session this browser confirmed (a login, GET
  // /api/v1/session), kept under entryd.user so that a page started offline
  // knows whose submissions it queues; forgotten on logout and on a 401. A
  // staff login name, never a person's data.
  const USER_KEY = "entryd.user";
  function rememberUser(user) {
    try { if (user) localStorage.setItem(USER_KEY, user); else localStorage.removeItem(USER_KEY); } catch (e) { /* storage off */ }
  }
  /** Who is logged in as far as the page knows (offline too): the last
   *  confirmed user, else this page's session; null when nobody is. */
  function knownUser() {
    let saved = null;
    try { saved = localStorage.getItem(USER_KEY); } catch (e) { /* storage off */ }
    return saved || (session && session.user) || null;
  }

  /** fetch, given up after `ms` (0: never) as if the network had failed: a
   *  server that does not answer (a tablet whose network drops packets) is
   *  offline for the form, which then works from its own data. */
  function fetchWithin(url, init, ms) {
    if (!ms || typeof AbortController !== "function") return fetch(url, init);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), ms);
    return fetch(url, { ...init, signal: abort.signal }).finally(() => clearTimeout(timer));
  }

  /** The session ({user, role, csrf}) or null when not logged in; throws ApiError(0) offline. */
  async function loadSession() {
    let r;
    try {
      r = await fetchWithin("/api/v1/session", { credentials: "same-origin", cache: "no-store" }, 5000);
    } catch (e) {
      throw new ApiError(0, "", {});
    }
    if (r.status === 401) { session = null; rememberUser(null); return null; }
    if (!r.ok) throw new ApiError(r.status, "", {});
    session = await r.json();
    rememberUser(session.user);
    return session;
  }

  /**
   * `text` when it is a path on this site, else "/": where the login page may
   * send the user back to (its ?next=). Refused: anything but one leading "/"
   * (so no "//host" and no scheme), backslashes, control characters and
   * spaces anywhere (a URL parser drops tabs and line ends, so "/\t/host"
   * would become "//host"), and whatever the browser resolves to another origin.
   */
  function localPath(text) {
    if (typeof text !== "string" || !/^\/(?![/\\])/.test(text)) return "/";
    for (const c of text) {
      const n = c.codePointAt(0);
      if (n <= 0x20 || (n >= 0x7f && n <= 0x9f) || c === "\\" || n === 0x2028 || n === 0x2029) return "/";
    }
    let url;
    try { url = new URL(text, location.origin); } catch (e) { return "/"; }
    if (url.origin !== location.origin || url.username || url.password) return "/";
    const path = url.pathname + url.search + url.hash;
    return path.startsWith("/") && !path.startsWith("//") ? path : "/";
  }

  function toLogin() {
    location.href = "/login?next=" + encodeURIComponent(location.pathname + location.search);
  }

  /** POST /api/v1/METHOD with params; resolves to the reply parameters, rejects with ApiError
   *  (status 0 also when no answer came within `timeout` ms, if given). */
  async function call(method, params, { redirect = true, timeout = 0 } = {}) {
    if (!session || !session.csrf) {
      const s = await loadSession();
      if (!s) { if (redirect) toLogin(); throw new ApiError(401, "NotLoggedIn", {}); }
    }
    let r;
    try {
      r = await fetchWithin("/api/v1/" + method, {
        method: "POST", credentials: "same-origin", cache: "no-store",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": session.csrf },
        body: JSON.stringify(params || {}),
      }, timeout);
    } catch (e) {
      throw new ApiError(0, "", {});
    }
    let body = {};
    try { body = await r.json(); } catch (e) { body = {}; }
    if (r.ok) return body;
    if (r.status === 401) { session = null; rememberUser(null); if (redirect) toLogin(); }
    throw new ApiError(r.status, body.error, body.parameters);
  }

  /** A sentence for people about an ApiError (not for ValidationFailed, whose problems say it). */
  function describe(err) {
    const w = WORDS[lang];
    if (!(err instanceof ApiError)) return w.failed + String(err);
    switch (err.status) {
      case 0: return w.unreachable;
      case 401: return w.notLoggedIn;
      case 403: return w.forbidden;
      case 413: return w.tooLarge;
      case 429: return w.tooMany(err.parameters.retryAfter || 60);
      case 431: return w.headerTooLarge;
      case 503:
        if (err.name === "io.entryd.web.TooManyConnections") return w.tooManyConnections(err.parameters.retryAfter || 10);
        return w.busy;
      case 502: case 504: return w.busy;
      default: return w.failed + (err.name || err.status);
    }
  }

  /** document.createElement with attributes and children. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) el.append(c);
    return el;
  }

  /** The flag emoji of an ISO 3166-1 alpha-2 code (two regional indicator symbols). */
  function flagOf(code) {
    if (!/^[A-Z]{2}$/.test(code || "")) return "";
    return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
  }

  /** Fills the shared header: language buttons, the user and log out, links by role. */
  function header(s) {
    document.querySelectorAll("[data-lang]").forEach((b) => b.addEventListener("click", () => setLang(b.dataset.lang)));
    const who = document.getElementById("who");
    const out = document.getElementById("logout");
    if (who) who.textContent = s ? s.user : "";
    if (out) {
      out.hidden = !s;
      out.addEventListener("click", async () => {
        try { await call("logout", {}, { redirect: false }); } catch (e) { /* gone anyway */ }
        rememberUser(null);
        location.href = "/login";
      });
    }
    // A link's data-role names the role its page needs; the roles that include it may follow it
    // (roles are sets of methods: submit, a kiosk's, reaches none of these pages).
    const reaches = { read: ["read", "write", "admin"], write: ["write", "admin"], admin: ["admin"] };
    document.querySelectorAll("[data-role]").forEach((a) => {
      a.hidden = !s || !(reaches[a.dataset.role] || []).includes(s.role);
    });
  }

  /** A staff page's start: the session, the header and the language. Null when the page cannot go on:
   *  the login page is opened, or (offline) `status("bad", …)` says why. */
  async function openStaffPage(status) {
    let s;
    try { s = await loadSession(); } catch (err) { status("bad", describe(err)); return null; }
    if (!s) { toLogin(); return null; }
    header(s);
    setLang(lang);
    return s;
  }

  // The service worker (/sw.js) that lets the form start offline (issue 32):
  // browsers allow one only in a secure context (https, or http on loopback).
  if ("serviceWorker" in navigator && window.isSecureContext) {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => { /* the page works without it, online */ });
  }

  return {
    WORDS, ApiError, call, describe, h, flagOf, header, loadSession, openStaffPage, toLogin, localPath, knownUser, rememberUser,
    defaultLang,
    get lang() { return lang; }, setLang, onLang: (f) => listeners.push(f),
    get session() { return session; },
  };
})();
