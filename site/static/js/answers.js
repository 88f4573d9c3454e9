// Worked answers (::: answer ID, a <details data-answer-for=ID>) stay folded until their question is answered:
// each time a question's view comes back answered for a new guess, its worked answer opens. The student may
// also open one without answering; print shows them all open (site.css).
export function answerRevealer() {
  const shown = new Map(); // question id -> the state its worked answer was last opened for
  return (widgetId, view) => {
    if (!view.flags.answered) return;
    const state = JSON.stringify(view.state);
    if (shown.get(widgetId) === state) return;
    shown.set(widgetId, state);
    for (const details of document.querySelectorAll(`details[data-answer-for="${CSS.escape(widgetId)}"]`)) {
      details.open = true;
    }
  };
}
