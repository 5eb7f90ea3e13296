/* global Entryd */
// The login page: POST /api/v1/login sets the session cookie; then back to ?next=.
"use strict";

(() => {
  const E = Entryd;
  const W = {
    zh: { user: "用户名", password: "密码", failed: "用户名或密码不正确。", missing: "请填写用户名和密码。", title: "登录 · entryd", busy: "正在登录…" },
    en: { user: "User name", password: "Password", failed: "Wrong user name or password.", missing: "Please enter your user name and password.", title: "Log in · entryd", busy: "Logging in…" },
  };
  const $ = (id) => document.getElementById(id);

  /** Only a path on this site (Entryd.localPath): no open redirect. */
  function nextPage() {
    return E.localPath(new URLSearchParams(location.search).get("next") || "/");
  }

  function words(lang) {
    $("user-label").textContent = W[lang].user;
    $("password-label").textContent = W[lang].password;
    document.title = W[lang].title;
    const s = $("status");
    if (s.dataset.key) s.textContent = typeof W[lang][s.dataset.key] === "string" ? W[lang][s.dataset.key] : s.textContent;
  }

  function show(kind, key, text) {
    const s = $("status");
    s.className = "status " + kind;
    s.dataset.key = key || "";
    s.textContent = text || (key ? W[E.lang][key] : "");
  }

  E.onLang(words);
  E.header(null);
  E.setLang(E.lang);

  $("login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const user = $("user").value.trim(), password = $("password").value;
    if (!user || !password) { show("bad", "missing"); (user ? $("password") : $("user")).focus(); return; }
    $("submit").disabled = true;
    show("info", "busy");
    let r;
    try {
      r = await fetch("/api/v1/login", {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ user, password }),
      });
    } catch (e) {
      show("bad", "", E.describe(new E.ApiError(0)));
      $("submit").disabled = false;
      return;
    }
    let body = {};
    try { body = await r.json(); } catch (e) { body = {}; }
    $("submit").disabled = false;
    if (r.ok) { E.rememberUser(body.user || user); location.href = nextPage(); return; }
    $("password").value = "";
    if (r.status === 401) { show("bad", "failed"); $("password").focus(); return; }
    show("bad", "", E.describe(new E.ApiError(r.status, body.error, body.parameters)));
  });
  $("user").focus();
})();
