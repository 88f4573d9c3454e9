"""The site's languages, in one list. The first is the default: its pages live at the site root, the
others under <lang>/ (en/prefill-decode/).

Adding a language is its code here, its catalogs (site/i18n/<lang>.yml, lessons/<lang>/catalog.yml, and a
block in the TEXT of every sim/ module that has one) and its lessons in lessons/<lang>/. The build names
every key that is missing, with its file and line.
"""

LANGUAGES = ("zh", "en")
DEFAULT = LANGUAGES[0]
