<?php

declare(strict_types=1);
// As MediaWiki ends a page (MediaWiki::outputResponsePayload()): a Content-Length only when the page goes
// through PHP's own output_buffering buffer, whose length it can know, then the work that follows the page.
$content = str_repeat('p', 20000);
$status = ob_get_status();
if (ob_get_level() <= 1 && !headers_sent() && ($status['name'] ?? 'default output handler') === 'default output handler') {
    header('Content-Length: ' . (ob_get_length() + strlen($content)));
}
print $content;
@ob_end_flush();
@flush();
usleep(100_000); // deferred updates
