/* eslint-env serviceworker */
// The service worker (issue 32): the pages, scripts, styles, icons and the
// manifest are cached when it is installed, under a name with the build's
// version (entryd-embed writes it and the list below, from every other file of
// web/), so the form starts with entryd-web unreachable: reload, a browser
// restart, a tablet reboot. An upgraded entryd-web serves another sw.js; the
// browser installs it, and its activation deletes the caches of older builds.
//
// Pages: network first, the cache when the network fails (the query, e.g.
// ?kiosk=1, is ignored there). Scripts, styles, icons: this build's cache.
// The form's data (/api/v1/offline): network first, its last answer kept.
// No other API call is ever cached or answered here.
"use strict";

const VERSION = "@ENTRYD_BUILD@";
const PRECACHE = /* @ENTRYD_PRECACHE@ */ [];
const CACHE = "entryd-" + VERSION;
const DATA = "/api/v1/offline";

self.addEventListener("install", (ev) => {
  ev.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(PRECACHE.map((url) => new Request(url, { cache: "reload" })));
    // the form's data of the build before, until the page fetches it again
    for (const name of await caches.keys()) {
      if (name === CACHE || !name.startsWith("entryd-")) continue;
      const old = await (await caches.open(name)).match(DATA);
      if (old) await cache.put(DATA, old);
    }
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (ev) => {
  ev.waitUntil((async () => {
    for (const name of await caches.keys()) if (name.startsWith("entryd-") && name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

// How long a page waits for the network before its cached copy is shown (a
// network that drops packets answers nothing for minutes); the network's
// answer still refreshes the cache when it comes.
const PATIENCE = 4000;

async function networkFirst(request, key) {
  const cache = await caches.open(CACHE);
  const network = fetch(request).then(async (response) => {
    if (response.ok) await cache.put(key, response.clone());
    return response;
  });
  const cached = await cache.match(key, { ignoreSearch: true });
  if (!cached) return network;
  const late = new Promise((resolve) => setTimeout(() => resolve(cached), PATIENCE));
  // a proxy's 502-504 while entryd-web is down counts as no network too
  const answered = network.then((r) => (r.status >= 502 && r.status <= 504 ? cached : r), () => cached);
  return Promise.race([answered, late]);
}

self.addEventListener("fetch", (ev) => {
  const request = ev.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname === DATA) { ev.respondWith(networkFirst(request, DATA)); return; }
  if (url.pathname.startsWith("/api/") || url.pathname === "/healthz") return;
  const path = url.pathname;
  if (request.mode === "navigate" || !PRECACHE.includes(path) || !path.startsWith("/assets/")) {
    ev.respondWith(networkFirst(request, path));
    return;
  }
  ev.respondWith((async () => {
    const cached = await caches.match(path, { cacheName: CACHE });
    return cached || networkFirst(request, path);
  })());
});
