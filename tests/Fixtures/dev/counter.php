<?php
require_once __DIR__ . '/lib/counter.php';
echo 'counter ', dev_fixture_count();
