// The offline page (site/templates/offline.html), which the service worker shows for a page it has not kept: it
// lists the pages that are kept, as the worker reports them (site/sw.js, "pages"), each with its heading and
// language as kept. Pages in this page's language come first, in the order they were kept.

function keptPages() {
  if (!("serviceWorker" in navigator)) return Promise.resolve([]);
  return navigator.serviceWorker.ready.then((registration) => new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data.pages ?? []);
    (navigator.serviceWorker.controller ?? registration.active).postMessage({ type: "pages" }, [channel.port2]);
  }));
}

// A kept page's heading, as written in its HTML (entities, markup and all), as text only. DOMParser builds an
// inert document: nothing in it runs or loads, and none of its markup reaches the page.
function titleText(html) {
  return (new DOMParser().parseFromString(html, "text/html").body.textContent ?? "").trim();
}

async function fill(region) {
  const lang = document.documentElement.lang;
  const pages = (await keptPages()).sort((a, b) => Number(b.lang === lang) - Number(a.lang === lang));
  const list = region.querySelector("[data-saved-list]");
  list.replaceChildren(...pages.map((page) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = page.url;
    link.textContent = titleText(page.title);
    if (page.lang && page.lang !== lang) link.lang = page.lang;
    item.append(link);
    return item;
  }));
  region.querySelector("[data-saved-none]").hidden = pages.length > 0;
  list.hidden = pages.length === 0;
  region.dataset.filled = "";
}

// Served by the worker at another page's address, under a <base> of its own: there "#main" would lead to the
// offline page's address, a new navigation. In-page links are pointed at this document instead.
if (document.baseURI !== document.URL) {
  for (const link of document.querySelectorAll('a[href^="#"]')) {
    link.href = new URL(link.getAttribute("href"), document.URL).href;
  }
}

for (const region of document.querySelectorAll("[data-saved-pages]")) {
  fill(region).catch((error) => console.warn(`inferlab: the kept pages could not be listed (${error?.message ?? error})`));
}
