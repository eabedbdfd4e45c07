<?php

declare(strict_types=1);
echo 'this is discarded';
while (ob_get_level() > 0) {
    ob_end_clean();
}
header('X-Before-Output: kept');
echo 'printed after ending every buffer;';
header('X-After-Output: lost');
echo json_encode(['headers_sent' => headers_sent(), 'level' => ob_get_level()]);
