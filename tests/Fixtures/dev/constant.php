<?php
if (!defined('DEV_FIXTURE_FLAG')) {
    define('DEV_FIXTURE_FLAG', 1);
}
echo 'constant';
