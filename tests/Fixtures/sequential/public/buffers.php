<?php

declare(strict_types=1);
echo 'level ', ob_get_level(), ';';
ob_start();
echo 'one;';
ob_start();
echo 'two;';
ob_start();
echo 'discarded;';
ob_clean();
echo 'three;';
// three buffers left open: their content is part of the response
