#!/usr/bin/perl
# Reads the body from stdin (CONTENT_LENGTH bytes) and echoes it upper-cased with its method and type.
use strict;
use warnings;
binmode STDIN;
binmode STDOUT;
my $len = $ENV{CONTENT_LENGTH} || 0;
my $body = '';
while (length($body) < $len) {
    my $n = read(STDIN, $body, $len - length($body), length($body));
    last unless $n;
}
print "Content-Type: text/plain\r\n\r\n";
print "$ENV{REQUEST_METHOD} $ENV{CONTENT_TYPE} " . length($body) . "\n";
print uc($body);
