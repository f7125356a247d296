"""What the main-text scorer knows about pages: the elements, roles, class and id
words that mark furniture or content, and its thresholds. Data and patterns only;
``main_text.py`` is the algorithm that reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Never part of the main text, with everything inside them. Figures go too: the
# captions and credits of photos are not the article's prose.
NEVER_TEXT = [
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "object",
    "embed",
    "button",
    "select",
    "input",
    "textarea",
    "dialog",
    "figure",
    "figcaption",
    "picture",
    "video",
    "audio",
    "map",
]
NEVER_TEXT_OR_META = ", ".join([*NEVER_TEXT, "meta"])
# Hidden elements: [hidden], [aria-hidden=true], or a style that hides them. Styles
# are tested in Python: lexbor walks the tree once per substring selector, which cost
# more than all the rest of the furniture.
MAYBE_HIDDEN = "[hidden], [aria-hidden], [style]"
HIDING_STYLES = ("display:none", "display: none", "visibility:hidden", "visibility: hidden")
# Classes that hide an element in every CSS framework that names them so (Bootstrap,
# Tailwind, WordPress themes): a screen-reader label, a collapsed block, print-only text.
HIDING_CLASSES = frozenset(
    {"hidden", "hide", "d-none", "sr-only", "visually-hidden", "screen-reader-text", "invisible"}
)
SHOWING_CLASS = re.compile(
    r"d-\w+-(block|inline|inline-block|flex|grid|table)$|\w+:(block|inline|flex|grid|table)"
)
# Page furniture, by tag and role, then by words in a class or id. Either is dropped
# only while it holds under half of the page's text: some sites wrap the whole page
# in a <header>, or in a div whose class names a "sidebar" layout.
FURNITURE_TAGS = frozenset({"nav", "aside", "header", "footer", "menu"})
FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo"})
# Headings that may open a comment thread (COMMENT_HEADING), selected with the rest:
# every selection walks the whole tree. <h1> is the page's own title.
THREAD_HEADING_TAGS = frozenset({"h2", "h3", "h4", "h5", "h6"})
# Roles are tested in Python: lexbor walks the whole tree once per attribute selector.
MAYBE_HIDDEN_OR_FURNITURE = ", ".join(
    [MAYBE_HIDDEN, *sorted(FURNITURE_TAGS), "[role]", *sorted(THREAD_HEADING_TAGS), "img"]
)
UNLIKELY_WORDS = (
    "-ad-",
    "ad-break",
    "advert",
    "agegate",
    "ai2html",
    "author",
    "banner",
    "breadcrumb",
    "byline",
    "caption",
    "carousel",
    "combx",
    "comment",
    "community",
    "cookie",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gallery",
    "gdpr",
    "header",
    "legends",
    "menu",
    "newsletter",
    "noprint",
    "overlay",
    "pager",
    "pagination",
    "popup",
    "promo",
    "related",
    "remark",
    "replies",
    "rss",
    "share",
    "shoutbox",
    "sidebar",
    "signup",
    "skyscraper",
    "slide",
    "social",
    "sponsor",
    "subscribe",
    "supplemental",
    "swiper",
    "tags",
    "timestamp",
    "widget",
    "yom-remote",
)


def _alternatives(words: tuple[str, ...]) -> str:
    """A regex for any of ``words``, grouped by first letter: "a(?:dvert|uthor)|b(?:anner)".

    A third faster than the flat alternation: the engine tries one group, not every
    word, at each position of a name that holds none of them.
    """
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rest)})" for first, rest in groups.items())


UNLIKELY = re.compile(_alternatives(UNLIKELY_WORDS))
# Of the unlikely words, those that name a box of something other than the article
# wherever they appear: a content word beside them ("main-box related-box",
# "article-comments", "content-share") does not save the element.
BOILERPLATE_WORDS = (
    "advert",
    "breadcrumb",
    "comment",
    "cookie",
    "disqus",
    "gdpr",
    "newsletter",
    "popup",
    "related",
    "share",
    "social",
    "sponsor",
    "subscribe",
)
BOILERPLATE = re.compile(_alternatives(BOILERPLATE_WORDS))
# A class or id with one of these words names content, whatever else it says
# ("article-header", "main-sidebar-layout").
CONTENT_WORDS = ("article", "body", "content", "main", "column", "layout", "subhead")
# The classes the social networks' embed code gives the <blockquote> holding a post's
# text: a post the article quotes, kept when its box (at least EMBEDDED_POST_SHARE
# of the box's text) is named like a share bar ("social-media-embed").
EMBEDDED_POSTS = frozenset(
    {"twitter-tweet", "twitter-video", "instagram-media", "tiktok-embed", "reddit-embed-bq"}
)
EMBEDDED_POST_SHARE = 0.8
NEVER_DROPPED = frozenset({"html", "body", "article", "main"})

# Class weights: a container named like content is likelier the article; one named
# like a comment thread, a share bar or an advertisement less likely.
POSITIVE = re.compile(
    r"article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story",
    re.IGNORECASE,
)
NEGATIVE = re.compile(
    r"-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|foot|footer|footnote"
    r"|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper"
    r"|sponsor|shopping|tags|tool|widget",
    re.IGNORECASE,
)
# schema.org microdata naming the article's text (https://schema.org/articleBody):
# a container so named counts as much as one whose class says "article".
ARTICLE_BODY_ITEMPROPS = frozenset({"articleBody", "articlebody"})
ARTICLE_BODY_WEIGHT = 25.0

# Elements that start a new line of text; the others flow inline.
BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
HEADING_RANK = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
PARAGRAPH_TAGS = "p, pre, td, blockquote"
# Elements whose own text (not their children's) can be a paragraph: many sites
# write paragraphs as text broken by <br> straight inside a div or a span.
LOOSE_TEXT_TAGS = "div, span, font, section, article, center, b, strong, em, i"
PARAGRAPH_TAG_SET = frozenset(PARAGRAPH_TAGS.split(", "))
PARAGRAPH_OR_LOOSE_TAGS = f"{PARAGRAPH_TAGS}, {LOOSE_TEXT_TAGS}"
MIN_PARAGRAPH = 25  # characters: shorter text is a label, a date, a button
# Readability's starting scores: a div is the likeliest wrapper of prose, a list or
# a heading the least likely.
TAG_SCORE = {
    "div": 5.0,
    "pre": 3.0,
    "td": 3.0,
    "blockquote": 3.0,
    "address": -3.0,
    "ol": -3.0,
    "ul": -3.0,
    "dl": -3.0,
    "dd": -3.0,
    "dt": -3.0,
    "li": -3.0,
    "form": -3.0,
    "h1": -5.0,
    "h2": -5.0,
    "h3": -5.0,
    "h4": -5.0,
    "h5": -5.0,
    "h6": -5.0,
    "th": -5.0,
}
ANCESTOR_LEVELS = 3  # a paragraph gives points to this many containers around it
LIST_PAGE_BELOW = 10.0  # best score: under it, the page's content is lists, not prose


@dataclass(frozen=True)
class Tuning:
    """The scorer's thresholds: the only numbers bench/extraction.py tunes.

    They are tuned by 5-fold cross-validation on the article benchmark (tuned on four
    fifths, scored on the fifth), so a value is kept only when it holds on pages it
    was not chosen on.
    """

    rival_share: float = 0.75  # candidates this close to the best are parts of one article
    expand_share: float = 0.8  # an ancestor is taken when this share of what it adds is prose
    sibling_share: float = 0.3  # a sibling scoring this share of the best container joins it
    clean_links_high: float = 0.5  # link density that cuts a block inside the content
    clean_links_low: float = 0.35  # ... or this one, for a block not named like content
    retry_below: int = 250  # characters: so little text means the class rules cut the article


DEFAULT_TUNING = Tuning()
# Characters that each write most of a word (kana, CJK ideographs, Hangul syllables):
# retry_below counts each as IDEOGRAPH_WEIGHT letters (a word of English is about
# six characters with its space, of Chinese about two).
IDEOGRAPHS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
IDEOGRAPH_WEIGHT = 3
CLEAN_MAX_SHARE = 0.5
# A block inside the content made of at least MIN_CARDS elements of one tag and
# class, each holding a link, that are CARDS_SHARE of its text, is a row of teasers.
CARD_TAGS = frozenset({"div", "article", "section"})
# The blocks that may hold such a row: a box, or a list whose items each hold a card.
CARD_ROW_TAGS = CARD_TAGS | {"ul", "ol"}
CARD_ROWS = ", ".join(sorted(CARD_ROW_TAGS))
CARD_OR_ITEM_TAGS = CARD_TAGS | {"li"}
MIN_CARDS = 3
CARD_MAX = 500  # characters other than whitespace
CARDS_SHARE = 0.6
# A parent is a thin wrapper of the content when at most this share of its text is
# not the content's; the siblings of such a wrapper may be more of the article.
THIN_WRAPPER_SHARE = 0.1
WRAPPER_STOPS = frozenset(
    {"body", "html", "article", "main", "-document"}
)  # a block holding more of the content than this is the content
# A sibling of the content that only wraps a candidate (this share of its text) scores
# as that candidate.
WRAPPED_SHARE = 0.8
# Deeper trees are broken or hostile (real pages nest under 60 levels): the scoring
# walks up from paragraphs, which would cost depth x size on them.
MAX_DEPTH = 128
WORD = re.compile(r"\w+")
# Characters inside words that are never seen: soft hyphen, zero-width space, and the
# byte-order mark a copy and paste leaves mid-text (not the zero-width joiners, which
# shape Persian, Indic scripts and emoji).
INVISIBLE_CHARACTERS = ("\u00ad",)
WHITESPACE = b" \n\t\r"  # what _size leaves out
# A list that a paragraph leads into is the article's when this share of its links
# leads off the site (its sources, its picks), not to more of the site's pages.
LED_LIST_ELSEWHERE = 0.5
# ... and a list under a heading, when its links lead to this many other sites.
LED_LIST_HOSTS = 3
# A paragraph of at least this many links, each on a line of its own, is a list of them.
P_LINKS_MIN = 2
# A box inside the content whose links (at least MIN_CONTROLS) all lead nowhere, with
# at most CONTROLS_MAX characters of text, is buttons: a paywall's, a form's.
MIN_CONTROLS = 2
CONTROLS_MAX = 300
SENTENCE_END = re.compile(r"\.( |$)")
# A line that only labels an advertisement slot.
AD_LABEL = re.compile(
    r"^\W*(advertisement|advertising|advert|ads?|sponsored|anzeige|publicit[ée]|publicidad"
    r"|pubblicit[àa]|реклама)\W*$",
    re.IGNORECASE,
)
# A line that only labels a comment box: what is left of it once the box was cut, in
# no article's prose. (Copyright lines are not: the benchmark's articles keep some.)
# What a Chinese news page ends its article with: the editor in charge ("【责任编辑:
# 张樵苏 】"), the button to report an error ("【纠错】"), "Read the next one:". Only
# at the end, as FURNITURE_LINE.
EDITOR_LINE = re.compile(
    r"^(?:\W*(?:纠错|糾錯|责任编辑\W{0,3}\w{0,8}|責任編輯\W{0,3}\w{0,8}|阅读下一篇|閱讀下一篇)\W*)+$"
)
FURNITURE_LINE = re.compile(
    r"^\W*(\d+\s+)?(comments?|post (a )?comment|leave a (comment|reply)|add (a )?comment"
    r"|kommentare|kommentieren|commentaires|comentarios|commenti)\W*(\(\W*\d*\W*\))?\W*$",
    re.IGNORECASE,
)
# The heading of a comment thread, in words, not class names: a site nobody tuned for
# names its comment box in its own words ("x9c8d86"), but a reader must be told what
# follows ("34 responses to “Title”", "Top Rated Comments", "12 thoughts on ...").
# "Responses", "thoughts" and "reactions" need their count: an article may have a
# section called "Final thoughts".
COMMENT_HEADING = re.compile(
    r"^\W*(?:(?:\d+\s+)?(?:comments?|kommentare|commentaires|comentarios|commenti)"
    r"|\d+\s+(?:responses?|repl(?:y|ies)|reactions?|thoughts?)"
    r"|(?:top[- ]rated|best|reader|readers|user|latest|recent|newest|popular|all)\s+comments"
    r"|(?:leave|post|add|write)\s+an?\s+(?:reply|comment|response)"
    r"|join\s+the\s+(?:discussion|conversation))"
    r"(?:\s+(?:on|to|for|zu|sur|su|a)\b.*)?\W*(?:\(\s*\d*\s*\))?\W*$",
    re.IGNORECASE,
)
# A thread is replies of one shape: at least this many elements of one tag (and first
# class word, when they have one) under the heading, or in one list or box under it.
THREAD_ITEM_TAGS = frozenset({"li", "div", "article", "section", "dl"})
MIN_THREAD_ITEMS = 2
MAX_THREADS = 8  # comment headings looked under, per page
THREAD_ITEMS_NAMED = ", ".join(f"{tag}[class]" for tag in sorted(THREAD_ITEM_TAGS))
# A photo and one short block of text alone in a box: a figure written without
# <figure>, the text its caption (under CAPTION_MAX characters other than spaces).
CAPTION_BOX_TAGS = frozenset({"div", "span", "a"})
CAPTION_TAGS = frozenset({"p", "div", "span", "em", "small", "i"})
CAPTION_MAX = 400
# How far up from a <textarea> its form is looked for (a comment form nests it in a
# few wrappers; a page wrapped whole in a form has it far up, and keeps it).
FORM_LEVELS = 8
# How far up from a heading set alone in a wrapper the thread is looked for.
THREAD_HEADING_WRAPPERS = 3
# A credit for the photo above the article, left as the text's last line once the
# photo is gone ("Beitragsbild: Titelseite der FAZ, Ausriss."). Short: a paragraph
# that starts so is prose.
CREDIT_LINE = re.compile(
    r"^(beitragsbild|titelbild|headerbild|bildquelle|bildnachweis|fotos?|bild|photos?"
    r"|image|header image|featured image|photo credits?|credits?)\s*:.{0,120}$",
    re.IGNORECASE,
)
# A photo gallery's counter ("Image 1 of 8", "Bild 3 von 12", "Photo 2 of / 9"): the
# gallery's slides and controls are the smallest box around it that holds a picture.
# Searched in the lowered text: with re.IGNORECASE the search was six times slower
# (1.9 ms a page of the benchmark, a fifth of the whole extraction).
SLIDE_COUNTER_IN_TEXT = re.compile(
    r"(?:image|photo|picture|slide|bild|foto)\s*\d{1,3}\s*(?:of|von|de|sur)"
)
SLIDE_WORD = re.compile(r"(?i)^\s*(?:image|photo|picture|slide|bild|foto)(?:\s+\d|\s*$)")
SLIDE_COUNTER = re.compile(
    r"(?i)^(?:image|photo|picture|slide|bild|foto)\s+\d{1,3}\s+(?:of|von|de|sur)\s*(?:/\s*)?\d{1,3}$"
)
SLIDE_COUNTER_MAX = 40  # characters of a counter's element
GALLERY_LEVELS = 8  # how far up from a counter its picture is looked for
MAX_GALLERIES = 24  # texts opening with "Image", "Photo"... looked at, per page
# A photo's caption ends in its credit: "Protesters wore masks (Image: GETTY)". An
# article's sentence does not; only a line under CAPTION_MAX characters is read.
# "(AP Photo/Alan Diaz, File)" is an agency's credit of the same kind.
PICTURE_CREDIT = re.compile(
    r"\((?:(?:image|photo|picture|pic|foto|bild)s?:|(?:[^()]{0,30}\s)?(?:photo|foto)\s*/)"
    r"[^()]{1,80}\)\s*$",
    re.IGNORECASE,
)
# A line that only dates the article ("Published 11:34 PM EST Nov 19, 2019", "Updated:
# 18 Nov 2019 9:38 pm"): the date is the page's metadata, not its text. A time or a
# year of this era is required ("Updated GDAL library Issue #9614" is a changelog's).
DATELINE = re.compile(
    r"^(?:published|updated|posted|submitted|last updated|veröffentlicht|aktualisiert|publié"
    r"|mis à jour)"
    r"(?:\s+(?:on|am|le))?:?\s+[^.!?#]{0,60}\b(?:\d{1,2}:\d{2}|(?:19|20)\d{2})\b[^.!?#]{0,40}$"
    # "Today, 17:40" in the reader's language: a news site's time of the day, alone.
    r"|^(?:today|yesterday|heute|gestern|aujourd'hui|hoy|ayer|oggi|ieri|šodien|vakar"
    r"|сегодня|вчера|dzisiaj|wczoraj|今日|昨日|今天|昨天)\W{0,3}\d{1,2}:\d{2}$",
    re.IGNORECASE,
)
DATELINE_MAX = 160  # characters of a line read as one
# A line that is a date and nothing else ("23.10.2018", "2019-01-21 13:49",
# "Monday, November 18, 2019", "14. Januar 2020, 9:21 Uhr", "November 20, 2019 - 11:28
# AMT"): the article's date, set apart from its text. In digits in any language; with
# the month's name in English, German, French or Spanish (abbreviated or not), after a
# weekday's name or not. Only in a paragraph or a box: a table's cell, a list's item or
# a heading may be a date that the text lists (a release table, a diary's days).
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|januar|februar|märz"
    r"|mai|juni|juli|oktober|dezember|janvier|février|mars|avril|juin|juillet|août"
    r"|septembre|octobre|novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio"
    r"|agosto|septiembre|octubre|noviembre|diciembre)\.?"
)
DATE_ONLY = re.compile(
    r"^\W{0,3}(?:\w+,\s+)?"  # "Monday, ", "Freitag, "
    r"(?:\d{1,2}[./-]\d{1,2}[./-](?:19|20)\d{2}|(?:19|20)\d{2}[./-]\d{1,2}[./-]\d{1,2}"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}}"
    rf"|\d{{1,2}}\.?\s+(?:de\s+)?{_MONTH},?\s+(?:de\s+)?(?:19|20)\d{{2}})"
    r"(?:[\s,|@-]{1,5}(?:at\s+|um\s+|à\s+)?\d{1,2}[:h]\d{2}(?::\d{2})?"
    r"(?:\s?[ap]\.?m\.?)?(?:\s+(?:uhr|[a-z]{2,4}))?)?\W{0,3}$",
    re.IGNORECASE,
)
# A line of the article's particulars set apart by bars, one of them a time of day
# ("24. März 2004, 19:49 | Genesis", "By HNN Staff | November 18, 2019 at 2:26 PM"):
# a byline and a date, above the text, in any language. No sentence ends it.
STAMP_LINE = re.compile(r"^(?=[^|]{1,80}\|)(?=.*\b\d{1,2}:\d{2}\b).{0,160}[^.!?]$")
DATE_ONLY_TAGS = frozenset({"td", "th", "li", "dd", "dt", "pre", "code", *HEADING_RANK})
