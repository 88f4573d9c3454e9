// Offline reading: once the page has been served (Python ready, or given up), register the site's service worker
// (<html data-service-worker>: sw.js at the site's root) and ask it to keep this page. Resolves true once the page
// is kept, false where the browser has no service workers (an insecure origin) or refused; never rejects, never
// delays the page.
//
// The development server's pages carry no data-service-worker: a preview always shows the files just built, and a
// worker left from an earlier visit is removed.
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
    if (registered.active) registered.update().catch(() => {}); // offline, or the server unreachable: next time
    const registration = await navigator.serviceWorker.ready;
    const channel = new MessageChannel();
    const answer = new Promise((resolve) => { channel.port1.onmessage = (event) => resolve(event.data.kept); });
    registration.active.postMessage({ type: "keep", url: window.location.href }, [channel.port2]);
    return await answer;
  } catch (error) {
    console.warn(`inferlab: offline reading unavailable (${error?.message ?? error})`);
    return false;
  }
}
