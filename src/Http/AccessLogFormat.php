<?php

declare(strict_types=1);

namespace Kiln\Http;

/** How the access log writes a request (--access-log-format). */
enum AccessLogFormat: string
{
    /** Apache's and nginx's combined format. */
    case Combined = 'combined';
    /** One JSON object per line: time, method, path, status, bytes, duration, client, request_id, tier, worker. */
    case Json = 'json';
}
