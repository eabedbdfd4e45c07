<?php

declare(strict_types=1);
$before = ['precision' => ini_get('precision'), 'error_reporting' => error_reporting(), 'tz' => date_default_timezone_get()];
ini_set('precision', '5');
error_reporting(E_ERROR);
date_default_timezone_set('Pacific/Auckland');
set_include_path('/kiln-nowhere');
echo json_encode($before);
