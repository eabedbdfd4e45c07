<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/** What a CGI response's `Location` asks for (RFC 3875 §6.2). */
enum CgiRedirect
{
    /** No `Location`: a document response (§6.2.1). */
    case None;

    /**
     * `Location: /path?query` without `Status` (§6.2.2): the server MUST re-dispatch the request internally
     * (as GET, to that path) instead of answering the client; the response body, if any, is discarded.
     */
    case Local;

    /** Any other `Location` (§6.2.3/§6.2.4): sent to the client, with 302 unless the script set a `Status`. */
    case Client;
}
