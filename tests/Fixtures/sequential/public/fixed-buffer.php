<?php

declare(strict_types=1);

// A buffer the script may not remove (no PHP_OUTPUT_HANDLER_REMOVABLE), left open: PHP flushes it at the
// end of the request all the same.
ob_start(null, 0, PHP_OUTPUT_HANDLER_STDFLAGS & ~PHP_OUTPUT_HANDLER_REMOVABLE);
echo 'kept in a fixed buffer;';
ob_start();
echo 'and one above it;';
