// The student's progress, kept only in this browser (localStorage), never sent anywhere: the last answer to each
// question and whether it was right, and the sections of each lesson read. Where storage is refused (it throws
// on access or on writing: private modes, blocked site data), every feature here is simply absent.
//
// A question is any widget whose view has the flags `answered` and `correct` (the builder counts the same ones,
// builder/widgets.py is_question); it is kept under `SLUG#ID`, in no language, so that an answer given on one
// language's page counts on the other's. One key per site, named by the site's root (this file is
// static/js-<hash>/progress.js): sites that share an origin (user.github.io/a/ and /b/) keep their own. Its value
// is JSON: {questions: {"SLUG#ID": {setting, state, correct}}, read: {SLUG: [section id, …]}}. `setting` is the
// lesson's own setting of the widget (its island's state without `lang`): an answer kept for another setting (a
// lesson that has changed its question since) is not restored. `state` holds what the student changed from it.
import { TEXT } from "./text.js";
import { readUrlState } from "./urlstate.js";

const SITE = new URL("../../", import.meta.url).pathname;
// How long a screenful of a section must be on screen to count as read (see watchReading): a fling past takes a
// fraction of this, reading a screen of text many times it.
export const READ_MS_PER_SCREEN = 1500;
export const KEY = `inferlab-progress ${SITE}`;

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => values[key]);
}

function withoutLang(state) {
  const { lang, ...rest } = state;
  return rest;
}

function sameSetting(a, b) {
  const sorted = (state) => JSON.stringify(Object.keys(state).sort().map((key) => [key, state[key]]));
  return isObject(a) && isObject(b) && sorted(a) === sorted(b);
}

export function isQuestion(view) {
  return isObject(view?.flags) && "answered" in view.flags && "correct" in view.flags;
}

// What is kept, read afresh on every use (another tab may have written since); null where storage is refused.
function load() {
  let text;
  try {
    text = window.localStorage.getItem(KEY);
  } catch {
    return null;
  }
  let data = {};
  try {
    data = JSON.parse(text ?? "{}");
  } catch {
    // a damaged value reads as nothing kept, and is replaced on the next write
  }
  return {
    questions: isObject(data?.questions) ? data.questions : {},
    read: isObject(data?.read) ? data.read : {},
  };
}

function save(data) {
  try {
    window.localStorage.setItem(KEY, JSON.stringify(data));
  } catch {
    // quota or refused: this page still works, the next one will not remember
  }
}

// Storage usable at all? A test write, removed at once: some browsers allow reading and refuse writing.
function available() {
  try {
    const storage = window.localStorage;
    const probe = `${KEY} probe`;
    storage.setItem(probe, "1");
    storage.removeItem(probe);
    return true;
  } catch {
    return false;
  }
}

// A lesson page: restores each question's kept answer through the widget's normal render path, keeps every answer
// the student gives, and marks the sections read in the contents list.
export class LessonProgress {
  static open(slug) {
    return slug && available() && load() !== null ? new LessonProgress(slug) : null;
  }

  constructor(slug) {
    this.slug = slug;
  }

  key(widget) {
    return `${this.slug}#${widget.id}`;
  }

  // Each question's kept answer, shown as if the student had just typed it (graded by Python once it answers),
  // unless the address gives the widget a scenario of its own.
  restore(widgets) {
    const kept = load()?.questions ?? {};
    for (const widget of widgets) {
      if (!isQuestion(widget.view)) continue;
      const entry = kept[this.key(widget)];
      if (!isObject(entry) || !isObject(entry.state) || Object.keys(entry.state).length === 0) continue;
      if (!sameSetting(entry.setting, withoutLang(widget.initial))) continue;
      if (Object.keys(readUrlState(widget.id, widget.paramNames)).length > 0) continue;
      const fragment = Object.fromEntries(Object.entries(entry.state).filter(([name]) => widget.paramNames.includes(name)));
      widget.openScenario(fragment); // the lesson's setting with the kept answer on top, as a scenario link does
    }
  }

  // A view Python rendered for the student's own input (`source`, a control): an answer is kept, a box emptied
  // forgets it. Views of restored or linked scenarios are not the student's new answers.
  viewApplied(widget, view, source) {
    if (!source || !isQuestion(view)) return;
    const data = load();
    if (data === null) return;
    const key = this.key(widget);
    if (view.flags.answered) {
      const setting = withoutLang(widget.initial);
      const state = Object.fromEntries(Object.entries(withoutLang(view.state))
        .filter(([name, value]) => String(value) !== String(setting[name])));
      data.questions[key] = { setting, state, correct: Boolean(view.flags.correct) };
    } else delete data.questions[key];
    save(data);
  }

  // A section counts as read once its heading and its end (the next section's heading, or the lesson's last
  // element) have both been on screen during one visit, whenever each was, and the section has been on screen long
  // enough to be read: READ_MS_PER_SCREEN for each screen of its height (at least one screen's worth), summed over
  // the visit while the tab is in front. Scrolling through at a reader's pace does that, and so does reading a short
  // one whole; jumping past it from the contents does not, nor does a fling that carries it past in a fraction of a
  // second.
  watchReading() {
    const links = [...document.querySelectorAll(".contents a[href^='#']")];
    const headings = links.map((link) => document.getElementById(decodeURIComponent(link.hash.slice(1))));
    const article = document.querySelector("article.lesson");
    if (links.length === 0 || headings.includes(null) || !article) return;
    // The body's last block: the last one of its last part (builder/markdown.py wraps each <h2> section in one).
    const tail = [...article.children].filter((child) => !child.matches(".pager")).at(-1);
    const last = tail?.matches(".lesson-part") ? tail.lastElementChild : tail;
    const bounds = [...headings, last];
    // What is timed on screen: each section's part, or its heading where the lesson has no parts.
    const parts = headings.map((heading) => heading.closest(".lesson-part") ?? heading);
    const kept = new Set(load()?.read?.[this.slug] ?? []);
    links.forEach((link, i) => { if (kept.has(headings[i].id)) this.markRead(link); });
    if (typeof IntersectionObserver === "undefined") return;
    const seen = new Set();
    const showing = new Set(); // indexes of the parts on screen now
    const shownMs = parts.map(() => 0); // on screen so far, up to `since`
    let since = performance.now();
    let front = !document.hidden; // the tab in front since `since`
    let timer = null;
    const tally = () => {
      const now = performance.now();
      if (front) for (const i of showing) shownMs[i] += now - since;
      since = now;
      front = !document.hidden;
    };
    const neededMs = (i) => READ_MS_PER_SCREEN * Math.max(1, parts[i].getBoundingClientRect().height / window.innerHeight);
    const check = () => {
      tally();
      clearTimeout(timer);
      timer = null;
      const unread = headings.flatMap((heading, i) => (kept.has(heading.id) ? [] : [i]));
      const read = unread.filter((i) => seen.has(i) && seen.has(i + 1) && shownMs[i] >= neededMs(i));
      for (const i of read) {
        kept.add(headings[i].id);
        this.markRead(links[i]);
      }
      if (read.length > 0) {
        const data = load();
        if (data !== null) {
          data.read[this.slug] = [...new Set([...(Array.isArray(data.read[this.slug]) ? data.read[this.slug] : []), ...kept])];
          save(data);
        }
      }
      if (kept.size === headings.length) {
        observer.disconnect();
        document.removeEventListener("visibilitychange", check);
        return;
      }
      // Look again when the first part on screen, not yet read, will have been shown long enough.
      const waits = [...showing].filter((i) => !kept.has(headings[i].id)).map((i) => neededMs(i) - shownMs[i]);
      if (waits.length > 0 && !document.hidden) timer = setTimeout(check, Math.max(50, Math.min(...waits)));
    };
    const observer = new IntersectionObserver((entries) => {
      tally();
      for (const entry of entries) {
        for (const [i, bound] of bounds.entries()) if (bound === entry.target && entry.isIntersecting) seen.add(i);
        for (const [i, part] of parts.entries()) {
          if (part !== entry.target) continue;
          if (entry.isIntersecting) showing.add(i);
          else showing.delete(i);
        }
      }
      check();
    });
    for (const element of new Set([...bounds, ...parts])) observer.observe(element);
    document.addEventListener("visibilitychange", check);
  }

  markRead(link) {
    const item = link.closest("li");
    if (item.hasAttribute("data-read")) return;
    item.setAttribute("data-read", "");
    const word = document.createElement("span");
    word.className = "visually-hidden";
    word.textContent = ` ${TEXT.progress.read}`;
    link.append(word);
  }
}

// The home page and a chapter's page: each lesson's questions right out of its questions, each chapter's questions
// right and sections read (its [data-chapter-progress] lists their keys, SLUG#ID each), and on the home page the
// questions answered wrong and the button that forgets everything. Shown only where storage works and holds
// something; redrawn when another tab writes.
export function showHomeProgress() {
  const panel = document.querySelector("[data-progress-panel]");
  const chapters = [...document.querySelectorAll("[data-chapter-progress]")];
  if ((!panel && chapters.length === 0) || !available()) return;
  const keys = (element, name) => (element.dataset[name] ?? "").split(" ").filter(Boolean);
  const draw = () => {
    const data = load();
    if (data === null) return;
    const answers = data.questions;
    const answered = (key) => isObject(answers[key]);
    const right = (key) => answered(key) && answers[key].correct === true;
    const entries = panel ? [...panel.querySelectorAll("[data-question]")] : [];
    for (const entry of entries) {
      const answer = answers[entry.dataset.question];
      entry.hidden = !(isObject(answer) && answer.correct === false);
    }
    // Every question the page knows of: the revisit list's (home page) and the chapters' (either page).
    const known = [...new Set([...entries.map((entry) => entry.dataset.question),
      ...chapters.flatMap((chapter) => keys(chapter, "questions"))])];
    for (const line of document.querySelectorAll("[data-progress]")) {
      const mine = known.filter((key) => key.startsWith(`${line.dataset.progress}#`) && answered(key));
      const total = Number(line.dataset.questions);
      line.hidden = mine.length === 0 || !(total > 0);
      line.textContent = line.hidden ? "" : fill(TEXT.progress.right, { right: mine.filter(right).length, total });
    }
    for (const chapter of chapters) {
      const questions = keys(chapter, "questions");
      const sections = keys(chapter, "sections");
      const read = sections.filter((key) => {
        const [slug, id] = key.split("#");
        return Array.isArray(data.read[slug]) && data.read[slug].includes(id);
      }).length;
      chapter.hidden = read === 0 && !questions.some(answered);
      const words = questions.length > 0 ? TEXT.progress.chapter : TEXT.progress.chapter_read;
      chapter.textContent = chapter.hidden ? "" : fill(words, {
        right: questions.filter(right).length, questions: questions.length, read, sections: sections.length,
      });
    }
    if (!panel) return;
    const anything = Object.keys(answers).length > 0 || Object.keys(data.read).length > 0;
    panel.hidden = !anything;
    panel.querySelector("[data-revisit-none]").hidden = entries.some((entry) => !entry.hidden);
  };
  draw();
  window.addEventListener("storage", (event) => { if (event.key === KEY || event.key === null) draw(); });
  if (!panel) return;
  const forgotten = document.querySelector("[data-progress-forgotten]");
  panel.querySelector("[data-forget-progress]").addEventListener("click", () => {
    try {
      window.localStorage.removeItem(KEY);
    } catch {
      return;
    }
    draw();
    if (forgotten) {
      forgotten.textContent = TEXT.progress.forgotten;
      forgotten.focus();
    }
  });
}
