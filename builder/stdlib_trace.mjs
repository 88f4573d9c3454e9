// Which of the standard library's modules the site's Python imports, found by running it: Pyodide (from
// node_modules, in Node) boots as the page's worker boots it (static/js/worker.js: a boot that makes a snapshot,
// the simulator zip unpacked, the random generator reseeded), imports every widget module, renders every state it
// is given, imports every module it is given and makes the memory snapshot. Prints JSON
// {modules: {name: {file, by, during, frozen}}, sources: {file: text}, failures: [...]}: `file` is the module's
// file inside the standard library zip, `by` the module whose import statement loaded it, `during` which step that
// was, `frozen` whether it came from Pyodide's binary rather than the zip; `sources` holds each zip module's file
// as builder/pysource.py strips it. builder/stdlib.py runs it; nothing else does.
//
//   node stdlib_trace.mjs INDEX_DIR STDLIB_ZIP SIM_ZIP PLAN_JSON
//
// PLAN_JSON is {states: [[widget, state], ...], imports: [module, ...], sources: bool}. The trace renders the
// states with Pyodide's own zip and asks for the sources; the check, with the cut zip, renders them again and imports
// every module the trace found: a module the cut lacks, or one that needed what was stripped, fails here, not on a
// student's page.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [indexDir, stdlibZip, simZip, planFile] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(`${indexDir}/pyodide.mjs`).href);
// The exception lines of a Python traceback ("ModuleNotFoundError: No module named 'x'", and what it caused).
function reason(error) {
  const text = String(error?.message ?? error);
  const lines = text.split("\n").map((line) => line.trim()).filter((line) => /^[\w.]*(Error|Exception)\b/.test(line));
  return (lines.length ? lines : [text.trim().split("\n").pop()]).join("; ");
}
let pyodide;
try {
  pyodide = await loadPyodide({ indexURL: `${indexDir}/`, stdLibURL: stdlibZip, _makeSnapshot: true,
                                stdout: () => {}, stderr: (text) => process.stderr.write(`${text}\n`) });
} catch (error) {
  process.stdout.write(JSON.stringify({ modules: {}, sources: {}, failures: [`Pyodide's boot: ${reason(error)}`] }));
  process.exit(0);
}
pyodide.runPython(`
import sys

_MACHINERY = {"importlib", "importlib._bootstrap", "importlib._bootstrap_external", "_frozen_importlib",
              "_frozen_importlib_external"}  # frames between an import statement (or import_module) and a finder

class _ImportTrace:
    """Records, for each module imported from now on, the module whose import statement asked for it."""

    def __init__(self):
        self.why = {}
        self.during = "the worker's set-up"

    def find_spec(self, name, path=None, target=None):
        if name not in self.why:
            frame = sys._getframe(1)
            while frame and frame.f_globals.get("__name__") in _MACHINERY:
                frame = frame.f_back
            self.why[name] = (frame.f_globals.get("__name__") if frame else None, self.during)
        return None  # only watching: the real finders load it

_trace = _ImportTrace()
_booted = set(sys.modules)
sys.meta_path.insert(0, _trace)
`);
const trace = pyodide.globals.get("_trace");
const failures = [];

function step(during, work) {
  trace.during = during;
  try {
    work();
  } catch (error) {
    failures.push(`${during}: ${reason(error)}`);
  }
}

// As worker.js: unpackSimulator, then preparePython.
const SIM_DIR = "/home/pyodide/inferlab";
step("the worker's set-up", () => {
  pyodide.unpackArchive(new Uint8Array(readFileSync(simZip)), "zip", { extractDir: SIM_DIR });
  pyodide.runPython(`for _path, _finder in list(sys.path_importer_cache.items()):
    if _path.startswith(${JSON.stringify(SIM_DIR)}) and _finder is not None:
        _finder.invalidate_caches()
sys.path.insert(0, ${JSON.stringify(SIM_DIR)})
import random
random.seed()`);
});
let widgets = null;
step("import sim.widgets", () => { widgets = pyodide.pyimport("sim.widgets"); });
const { states, imports, sources } = JSON.parse(readFileSync(planFile, "utf8"));
if (widgets) {
  for (const name of widgets.names().toJs()) step(`import the widget ${name}`, () => widgets.load(name));
  for (const [name, state] of states) step(`render ${name}`, () => widgets.render_json(name, JSON.stringify(state)));
}
for (const name of imports) step(`import ${name}`, () => pyodide.pyimport(name));
step("the memory snapshot", () => pyodide.makeMemorySnapshot());

// Each module's file as builder/pysource.py strips it (comments and docstrings out, checked against the syntax
// tree), run by this very Python, whose syntax the builder's CPython may not know.
const stripper = pyodide.toPy({});
pyodide.runPython(readFileSync(new URL("./pysource.py", import.meta.url), "utf8"), { globals: stripper });
pyodide.globals.set("_strip", stripper.get("strip"));
const found = JSON.parse(pyodide.runPython(`
import json

_ROOT = "/lib/python%d%d.zip/" % sys.version_info[:2]
_modules, _sources = {}, {}
for _name, _module in sorted(sys.modules.items()):
    _file = getattr(_module, "__file__", None) or ""
    if not _file.startswith(_ROOT):
        continue
    _by, _during = (None, "Pyodide's boot") if _name in _booted else _trace.why.get(_name, (None, "Pyodide's boot"))
    _frozen = getattr(getattr(_module, "__spec__", None), "origin", None) == "frozen"
    _modules[_name] = {"file": _file[len(_ROOT):], "by": _by, "during": _during, "frozen": _frozen}
    if ${sources ? "not _frozen" : "False"}:
        _sources[_file[len(_ROOT):]] = _strip(_module.__loader__.get_source(_name))
json.dumps({"modules": _modules, "sources": _sources})
`));
process.stdout.write(JSON.stringify({ ...found, failures }));
