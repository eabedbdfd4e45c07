<?php

declare(strict_types=1);

// A page that only adapts its line breaks to the SAPI: no guard, served everywhere.
$eol = PHP_SAPI === 'cli' ? "\n" : '<br>';
echo 'page' . $eol;
