"""The pieces build.py assembles: lesson loading, Markdown extensions, directives, output."""
