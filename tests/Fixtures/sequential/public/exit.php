<?php

declare(strict_types=1);
header('X-Before-Exit: yes');
http_response_code(202);
echo 'before exit;';
ob_start();
echo ' in an inner buffer;';
exit('exit message');
echo 'never printed';
