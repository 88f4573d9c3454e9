// Copied to the root of the site the cross-engine tests serve, and loaded first by every page there: what a student
// must never see (console errors, uncaught errors and rejections, a resource that fails to load, a CSP violation)
// kept in window.__watched, which the tests read. Firefox's and WebKit's drivers have no one way to report these.
"use strict";
(() => {
  const seen = (window.__watched = []);
  const consoleError = console.error;
  console.error = (...args) => {
    seen.push(`console error: ${args.map(String).join(" ")}`);
    consoleError.apply(console, args);
  };
  // Capturing: a script, stylesheet or image that fails to load fires "error" on its element, without bubbling.
  addEventListener("error", (event) => {
    const element = event.target instanceof Element ? event.target : null;
    seen.push(element ? `failed to load: ${element.src || element.href}` : `uncaught: ${event.message}`);
  }, true);
  addEventListener("unhandledrejection", (event) => seen.push(`unhandled rejection: ${event.reason?.message ?? event.reason}`));
  document.addEventListener("securitypolicyviolation",
    (event) => seen.push(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
})();
