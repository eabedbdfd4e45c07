#!/usr/bin/perl
# Not a CGI response: text without a header block.
print "this is not a header line\n\nhello\n";
