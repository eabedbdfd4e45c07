<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

enum Verdict
{
    /** Serve Outcome::$path and $query (maybe rewritten) as the document root would. */
    case Proceed;
    /** Send Outcome::$status (3xx) with Location: Outcome::$location. */
    case Redirect;
    /** Answer Outcome::$status (403, 410, 500, or an R=4xx) — with the ErrorDocument for it, if any. */
    case Refuse;
}
