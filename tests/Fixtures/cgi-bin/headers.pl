#!/usr/bin/perl
# A document response with a Status, several Set-Cookie fields and bare LF line ends.
use strict;
use warnings;
my $q = $ENV{QUERY_STRING} // '';
print "Status: 201 Created\n";
print "Content-Type: text/plain; charset=utf-8\n";
print "Set-Cookie: a=1; Path=/\n";
print "Set-Cookie: b=2; HttpOnly\n";
print "X-Perl: yes\n";
print "\n";
print "created by perl, query=$q\n";
