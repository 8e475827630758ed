# Rewrites the relative links of one guide, Documentation/NAME.md, into DocC links, line for line
# (so diagnostics keep their line numbers), leaving code blocks alone:
#   [text](Other.md)          ->  [text](<doc:Other>)
#   [text](Other.md#anchor)   ->  [text](<doc:Other#Heading-Text>)   (GitHub's anchor, DocC's)
#   [text](#anchor)           ->  [text](<doc:NAME#Heading-Text>)
#   [text](../README.md)      ->  [text](<doc:/documentation/MODULE>), the catalog's landing page
# Full URLs stay. Any other relative link, and an anchor that names no heading, is an error.
# Usage: awk -v name=NAME -v guides=Documentation -v module=ValueStore -f guides.awk NAME.md
function slug(text,    s) {          # GitHub's anchor for a heading
    s = tolower(text)
    gsub(/[^a-z0-9 _-]/, "", s)
    gsub(/ /, "-", s)
    return s
}
function fragment(text,    s) {      # DocC's fragment for the same heading
    s = text
    gsub(/[^[:alnum:] \t-]/, "", s)
    gsub(/^[ \t-]+|[ \t-]+$/, "", s)
    gsub(/[ \t-]+/, "-", s)
    return s
}
function heading(guide, anchor,    file, line, text, fenced, found) {
    file = guides "/" guide ".md"
    fenced = 0
    found = ""
    while ((getline line < file) > 0) {
        if (line ~ /^[ \t]*```/) { fenced = !fenced; continue }
        if (fenced || line !~ /^#+ /) continue
        text = line
        sub(/^#+ +/, "", text)
        if (found == "" && slug(text) == anchor) found = fragment(text)
    }
    close(file)
    return found
}
function fail(message) {
    printf "%s/%s.md:%d: error: %s\n", guides, name, FNR, message > "/dev/stderr"
    failed = 1
}
function rewrite(target,    guide, anchor, parts, title) {
    if (target ~ /^[a-z][a-z0-9+.-]*:/) return "(" target ")"       # https:, mailto:, doc:
    if (target == "../README.md") return "(<doc:/documentation/" module ">)"   # the landing page
    guide = target
    anchor = ""
    if (index(target, "#") > 0) {
        guide = substr(target, 1, index(target, "#") - 1)
        anchor = substr(target, index(target, "#") + 1)
    }
    if (guide == "") guide = name ".md"
    if (guide !~ /^[A-Za-z0-9]+\.md$/ || system("test -f '" guides "/" guide "'") != 0) {
        fail("the link '" target "' leads outside Documentation/, where DocC cannot follow; link a guide, one of its headings, or a full URL")
        return "(" target ")"
    }
    sub(/\.md$/, "", guide)
    if (anchor == "") return "(<doc:" guide ">)"
    title = heading(guide, anchor)
    if (title == "") {
        fail("the link '" target "' names no heading of " guide ".md")
        return "(" target ")"
    }
    return "(<doc:" guide "#" title ">)"
}
/^[ \t]*```/ { fenced = !fenced; print; next }
fenced { print; next }
{
    line = $0
    out = ""
    while (match(line, /\]\([^) ]+\)/)) {
        out = out substr(line, 1, RSTART) rewrite(substr(line, RSTART + 2, RLENGTH - 3))
        line = substr(line, RSTART + RLENGTH)
    }
    print out line
}
END { exit failed }
