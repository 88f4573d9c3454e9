// Offline reading: once the page has been served (Python ready, or given up), register the site's service worker
// (<html data-service-worker>: sw.js at the site's root) and ask it to keep this page. Resolves true once the page
// is kept, false where the browser has no service workers (an insecure origin) or refused; never rejects, never
// delays the page.
//
// The development server's pages carry no data-service-worker: a preview always shows the files just built, and a
// worker left from an earlier visit is removed.
// The active worker once a newer one, installing or waiting, has taken over or failed. A message to the worker
// on its way out restarts it (it had been stopped to make way), and Chromium then holds the new one's activation
// until the old one idles out, long enough for the next navigation to be caught in the swap and never answered.
async function newestWorker(registration) {
  const pending = registration.installing ?? registration.waiting;
  if (pending) {
    await new Promise((resolve) => {
      const settled = () => pending.state === "activated" || pending.state === "redundant";
      pending.addEventListener("statechange", () => settled() && resolve());
      if (settled()) resolve();
    });
  }
  return registration.active;
}

export async function keepForOffline(served) {
  if (!("serviceWorker" in navigator)) return false;
  const script = document.documentElement.dataset.serviceWorker;
  if (!script) {
    for (const registration of await navigator.serviceWorker.getRegistrations()) await registration.unregister();
    return false;
  }
  await served;
  try {
    const root = new URL(document.documentElement.dataset.root || "./", document.baseURI);
    const registered = await navigator.serviceWorker.register(new URL(script, root));
    // A redeploy's sw.js is looked for now, not only when the browser's own check after a navigation comes round
    // (which can be long after the page is served): its cache then replaces the old build's at once.
    if (registered.active) await registered.update().catch(() => {}); // offline, or unreachable: next time
    const worker = await newestWorker(await navigator.serviceWorker.ready);
    const channel = new MessageChannel();
    const answer = new Promise((resolve) => { channel.port1.onmessage = (event) => resolve(event.data.kept); });
    worker.postMessage({ type: "keep", url: window.location.href }, [channel.port2]);
    return await answer;
  } catch (error) {
    console.warn(`inferlab: offline reading unavailable (${error?.message ?? error})`);
    return false;
  }
}

const WORKER_ANSWER_MS = 2000; // a service worker of an older build does not answer "available"

// Thrown where a file the page needs on use cannot be had: offline, and not kept by the service worker.
export class Unreachable extends Error {}

// Whether the service worker between the page and the network has the file or can fetch it now (site/sw.js,
// "available"): asked before a script is loaded on use (the search index, plotly.js), since offline a failed load
// would be an error in the console, and the reader is better told why. Without a worker in between, the load
// itself tells. `keepTheRest`: the student is searching, so the worker keeps everything it keeps on use.
export function available(url, { keepTheRest = false } = {}) {
  const worker = navigator.serviceWorker?.controller;
  if (!worker) return Promise.resolve(true);
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(true), WORKER_ANSWER_MS);
    channel.port1.onmessage = (event) => {
      clearTimeout(timer);
      resolve(event.data.available);
    };
    worker.postMessage({ type: "available", url, keepTheRest }, [channel.port2]);
  });
}
