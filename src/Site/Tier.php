<?php

declare(strict_types=1);

namespace Kiln\Site;

/** Where a document root's scripts run (see docs: execution tiers). */
enum Tier: string
{
    /** In the worker, one request at a time, native superglobals; state is shared. */
    case Sequential = 'sequential';
    /** A supervised pool of php-cgi FastCGI children: fresh state per request. */
    case Isolated = 'isolated';
    /** A fork of a warm parent per request. */
    case Fork = 'fork';
    /** An existing FastCGI responder (php-fpm) at an address. */
    case FastCgi = 'fastcgi';
    /** RFC 3875 CGI: any executable under the cgi-bin directory. */
    case Cgi = 'cgi';
}
