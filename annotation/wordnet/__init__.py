"""WordNet 3.0, read offline from Debian's ``wordnet-base``: lemmas and synonyms straight from its
files (``files.py``, milliseconds), anything else through NLTK's WordNet reader (``wordnet()``).

The package ships the database (``/usr/share/wordnet``) but not the ``lexnames`` file the reader
needs: that list of the 45 lexicographer files of ``lexnames(5)`` lives beside this module. The
project's set-up installs the package (``make wordnet``); nothing is downloaded at run time.
"""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from django.conf import settings
from lemminflect import getInflection

from annotation.models import PartOfSpeech
from annotation.wordnet.files import WordNetFiles, wordnet_files

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

WORDNET_DIR = Path("/usr/share/wordnet")
LEXNAMES = Path(__file__).with_name("lexnames")
#: WordNet's part of speech for each of ours; anything else is read as a noun, as the SWORDS library does.
WORDNET_POS = {PartOfSpeech.VERB: "v", PartOfSpeech.NOUN: "n", PartOfSpeech.ADJECTIVE: "a", PartOfSpeech.ADVERB: "r"}


class WordNetMissing(RuntimeError):
    pass


@cache
def wordnet() -> WordNetCorpusReader:
    """The WordNet 3.0 reader, loaded once per process (a second or two).

    NLTK is imported here, not at the top: importing it loads SciPy and scikit-learn, seconds that
    every command and web process paid at start-up whether it read WordNet or not.
    """
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _DebianWordNet(WordNetCorpusReader):  # type: ignore[misc]
        """NLTK's reader on Debian's files, with the ``lexnames`` file the package lacks."""

        def open(self, file: str) -> IO[Any]:
            if file == "lexnames":
                return LEXNAMES.open(encoding="utf-8")
            return super().open(file)

        def map_wn(self, version: str = "wordnet") -> None:
            """No mapping: this is WordNet 3.0 itself (NLTK would map from its own download)."""
            return None

    if not (WORDNET_DIR / "index.noun").exists():
        raise WordNetMissing(
            f"WordNet 3.0 is not installed at {WORDNET_DIR}: run `make wordnet` "
            "(or `sudo apt-get install wordnet-base`)"
        )
    # NLTK reads only below the directories of its data path.
    if str(WORDNET_DIR) not in nltk.data.path:
        nltk.data.path.append(str(WORDNET_DIR))
    with warnings.catch_warnings():
        # Without the Open Multilingual Wordnet the reader warns; English is all we read.
        warnings.simplefilter("ignore", UserWarning)
        return _DebianWordNet(str(WORDNET_DIR), None)


def _files() -> WordNetFiles:
    """WordNet's files, read directly (``files.py``): lemmas and synonyms without loading NLTK."""
    if not (WORDNET_DIR / "index.noun").exists():
        raise WordNetMissing(
            f"WordNet 3.0 is not installed at {WORDNET_DIR}: run `make wordnet` "
            "(or `sudo apt-get install wordnet-base`)"
        )
    return wordnet_files(WORDNET_DIR)


def wordnet_pos(pos: str) -> str:
    return WORDNET_POS.get(pos, "n")  # type: ignore[call-overload]


#: Lemmas by (word, WordNet part of speech) for the process (``lemmatize``).
_LEMMAS: dict[tuple[str, str], str] = {}


def lemmatize(word: str, *, pos: str) -> str:
    """WordNet's lemma of ``word`` as NLTK's ``WordNetLemmatizer`` gives it: the shortest form the
    morphy algorithm finds for the part of speech, else the word unchanged. Case-sensitive, so a
    capitalised word or a phrase comes back as it is.

    Remembered per word and WordNet part of speech for the process, the first
    ``WORDNET_LEMMA_CACHE_ENTRIES`` words (later ones are looked up each time rather than pushing
    out earlier ones: a system's substitutes are lemmatised in the same order on each evaluation,
    which a least-recently-used memo smaller than the vocabulary would never hit; docs/design.md
    §7, "Researcher pages"). The benchmark's candidates are not lemmatised per evaluation: their
    lemmas are stored (``annotation.wordnet.stored``; docs/design.md §10, "Stored lemmas")."""
    key = (word, wordnet_pos(pos))
    found = _LEMMAS.get(key)
    if found is None:
        lemmas = _files().morphy(*key)
        found = min(lemmas, key=len) if lemmas else word
        if len(_LEMMAS) < settings.WORDNET_LEMMA_CACHE_ENTRIES:
            _LEMMAS[key] = found
    return found


@cache
def synonyms(lemma: str, *, pos: str) -> tuple[str, ...]:
    """Synonyms and similar words of ``lemma`` for its part of speech, in WordNet's order: the
    lemmas of each of its synsets and, for adjectives, of the synsets "similar to" them (phrases
    with spaces; the similar synsets in the data file's order). The lemma itself is left out,
    whatever its case."""
    own = lemma.strip().casefold()
    files = _files()
    found: dict[str, None] = {}
    for synset_pos, offset in files.synsets(own.replace(" ", "_"), wordnet_pos(pos)):
        names, similar = files.synset(synset_pos, offset)
        for related in (names, *(files.synset(*pointer)[0] for pointer in similar)):
            for name in related:
                text = name.replace("_", " ")
                if text.casefold() != own:
                    found.setdefault(text)
    return tuple(found)


# Penn tags per part of speech, the base form first, so a word equal to its lemma is never inflected.
TAGS = {
    PartOfSpeech.VERB: ("VB", "VBP", "VBD", "VBN", "VBG", "VBZ"),
    PartOfSpeech.NOUN: ("NN", "NNS"),
    PartOfSpeech.ADJECTIVE: ("JJ", "JJR", "JJS"),
    PartOfSpeech.ADVERB: ("RB", "RBR", "RBS"),
}


def inflect_like(text: str, *, word: str, lemma: str, pos: str) -> str:
    """``text`` (a lemma or phrase) inflected as ``word`` inflects ``lemma`` for the part of speech
    ("sprint" like "ran" of "run": "sprinted"). A verb phrase inflects its first word, any other
    phrase its last; a form lemminflect does not know leaves the text as it is."""
    tags = TAGS.get(pos, ())  # type: ignore[call-overload]
    tag = next((tag for tag in tags if word.casefold() in (f.casefold() for f in getInflection(lemma, tag=tag))), None)
    if tag is None or tag == tags[0]:
        return text
    words = text.split(" ")
    head = 0 if pos == PartOfSpeech.VERB else len(words) - 1
    forms = getInflection(words[head], tag=tag)
    if forms:
        words[head] = forms[0]
    return " ".join(words)


__all__ = [
    "WORDNET_DIR",
    "WordNetMissing",
    "inflect_like",
    "lemmatize",
    "synonyms",
    "wordnet",
    "wordnet_pos",
]
