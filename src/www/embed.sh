#!/bin/sh
# embed.sh FILE: FILE as a C string, http_page, for the status server.
set -e
printf '/* Generated from %s by src/www/embed.sh: do not edit. */\n' "${1##*/}"
printf '#include <stddef.h>\n\n#include "http.h"\n\nconst char http_page[] =\n'
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$/\\n"/' "$1"
printf ';\nconst size_t http_page_len = sizeof(http_page) - 1;\n'
