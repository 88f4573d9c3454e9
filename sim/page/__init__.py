"""The page's helpers: numbers as text, escaping, SVG, the site's languages. They know nothing of the model, so that
the builder and the widgets share them without importing the simulator's physics."""
