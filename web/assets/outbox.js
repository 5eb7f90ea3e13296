/* exported Outbox, uuidv7 */
// The outbox: submissions that could not reach the server (network error or
// 503), kept in IndexedDB with their browser-made ids until the server has
// stored them. Nothing else of a person's data is ever written to storage.
// Each records the web user who queued it, and is sent only while that user
// is logged in (form.js): on a shared device another user's login never
// sends it. One the server refuses for good (400, 403, 404, 409, 413) is set
// aside (`rejected`: {status, error, problems, at}) and the rest go on; staff
// see and fix those on /outbox (outbox-page.js), never at a kiosk. One outbox
// for every tab of the origin: each change is told to the others on the
// BroadcastChannel "entryd-outbox", and one tab sends at a time (Web Locks).
"use strict";

const Outbox = (() => {
  const DB = "entryd", STORE = "outbox";
  let opening = null;

  function open() {
    if (!opening) {
      opening = new Promise((resolve, reject) => {
        const req = indexedDB.open(DB, 1);
        req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "id" });
        req.onsuccess = () => {
          const db = req.result;
          db.onversionchange = () => { db.close(); opening = null; };
          resolve(db);
        };
        req.onerror = () => { opening = null; reject(req.error); };
      });
    }
    return opening;
  }

  async function tx(mode, work) {
    const db = await open();
    return new Promise((resolve, reject) => {
      const t = db.transaction(STORE, mode);
      const store = t.objectStore(STORE);
      let result;
      const req = work(store);
      if (req) req.onsuccess = () => { result = req.result; };
      t.oncomplete = () => resolve(result);
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
  }

  // A page left for another (or kept in the back-forward cache) must not hold
  // the database: another page's open would wait for it.
  window.addEventListener("pagehide", () => {
    if (opening) opening.then((db) => db.close(), () => {});
    opening = null;
  });

  /** Whether the database exists, without creating it: reading an outbox that
   *  was never written opens nothing (a page opening the database while it is
   *  made, then left, could hold the others' opens back). */
  async function exists() {
    if (opening || !indexedDB.databases) return true;
    const dbs = await indexedDB.databases();
    return dbs.some((d) => d.name === DB);
  }

  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("entryd-outbox") : null;
  const listeners = [];
  if (channel) channel.onmessage = () => listeners.forEach((f) => f());
  /** Tells this page's listeners and the other tabs that the outbox changed. */
  function changed() {
    listeners.forEach((f) => f());
    if (channel) channel.postMessage("changed");
  }
  async function after(p) { const r = await p; changed(); return r; }

  return {
    /** Keeps {id, user, form, fields, locale, queuedAt[, rejected]}; the id makes a resend idempotent. */
    put: (item) => after(tx("readwrite", (s) => s.put(item))),
    /** Every submission, waiting or set aside, oldest id (UUIDv7: time order) first. */
    all: async () => ((await exists()) ? tx("readonly", (s) => s.getAll()) : []),
    get: async (id) => ((await exists()) ? tx("readonly", (s) => s.get(id)) : undefined),
    count: async () => ((await exists()) ? tx("readonly", (s) => s.count()) : 0),
    /** Deletes an item, its values with it (sent, erased, or dropped by staff). */
    remove: async (id) => ((await exists()) ? after(tx("readwrite", (s) => s.delete(id))) : undefined),
    /** Calls f whenever the outbox changes, in this tab or another. */
    onChange: (f) => listeners.push(f),
    /** Runs work while no other tab of this origin sends (Web Locks); skipped when one does. */
    exclusive: async (work) => {
      if (!navigator.locks) return work();
      return navigator.locks.request("entryd-outbox", { ifAvailable: true }, (lock) => (lock ? work() : undefined));
    },
  };
})();

/** A UUIDv7 (RFC 9562) in canonical lower-case text: 48-bit Unix ms, version 7, variant 10, random bits. */
function uuidv7() {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  let ms = Date.now();
  for (let i = 5; i >= 0; i--) { b[i] = ms % 256; ms = Math.floor(ms / 256); }
  b[6] = 0x70 | (b[6] & 0x0f);
  b[8] = 0x80 | (b[8] & 0x3f);
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
